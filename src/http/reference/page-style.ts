/**
 * The page's whole stylesheet, inline: the page loads nothing else, so it renders the same offline.
 * System font stacks only (no web fonts).
 */
export const PAGE_STYLE = `
:root{--bg:#fbfbfd;--fg:#1d2330;--muted:#5d6678;--line:#e3e6ee;--side:#14161f;--side-fg:#c9cedb;--accent:#6d4aff;
--get:#1f7a4d;--post:#2456c7;--put:#a36200;--delete:#b42318;--code:#f1f2f7}
*{box-sizing:border-box}
html{scroll-behavior:smooth}
body{margin:0;display:flex;font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:.86em}
code{background:var(--code);padding:.05em .3em;border-radius:4px}
pre{background:#161925;color:#e6e8f0;padding:.8em 1em;border-radius:8px;overflow-x:auto}
pre code{background:none;padding:0;color:inherit}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
nav.side{position:sticky;top:0;height:100vh;overflow-y:auto;width:330px;flex:none;background:var(--side);color:var(--side-fg);padding:1.2em 0 2em;font-size:13px}
nav.side a{color:var(--side-fg);display:block;padding:.18em 1.2em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
nav.side a:hover{background:#232636;text-decoration:none;color:#fff}
nav.side ul{list-style:none;margin:0 0 .6em;padding:0}
.brand{font-size:22px;font-weight:700;color:#fff;padding:0 1.2em .8em;letter-spacing:.02em}
.brand span{display:block;font-size:12px;font-weight:400;color:#8d93a5;letter-spacing:0}
.nav-h{display:flex;align-items:baseline;margin-top:.8em;text-transform:uppercase;font-size:11px;letter-spacing:.08em}
.nav-h a{color:#fff;font-weight:600}.nav-h .count{color:#8d93a5;text-transform:none;letter-spacing:0;padding-right:1.2em;white-space:nowrap}
.m{display:inline-block;width:3.3em;font:600 10px/1 ui-monospace,monospace}
.m.get{color:#5fd39a}.m.post{color:#7ea6ff}.m.put{color:#ffc266}.m.delete{color:#ff8a80}
main{flex:1;min-width:0;max-width:1100px;padding:1.5em 3em 6em}
header h1{margin:.2em 0 .1em;font-size:30px}
.version{font-size:.55em;color:var(--muted);font-weight:500;vertical-align:middle;border:1px solid var(--line);border-radius:99px;padding:.1em .6em}
.links{color:var(--muted);margin-top:0}
h2{font-size:22px;margin:2.2em 0 .6em;padding-bottom:.3em;border-bottom:2px solid var(--line);text-transform:capitalize}
#grpc h2,#schemas h2{text-transform:none}
h3{font-size:17px;margin:1.4em 0 .4em}
h4{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:1.2em 0 .4em}
section.op{background:#fff;border:1px solid var(--line);border-radius:10px;padding:.4em 1.4em 1em;margin:1em 0;box-shadow:0 1px 2px rgba(20,22,31,.04)}
section.op h3{display:flex;align-items:center;gap:.6em;flex-wrap:wrap}
.method{font:700 12px/1 ui-monospace,monospace;color:#fff;border-radius:5px;padding:.45em .6em;background:var(--get)}
.method.post{background:var(--post)}.method.put,.method.patch{background:var(--put)}.method.delete{background:var(--delete)}
code.path{background:none;font-size:15px;padding:0}
.meta{display:flex;gap:.4em;flex-wrap:wrap}
.pill{font-size:11.5px;border-radius:99px;padding:.1em .7em;border:1px solid var(--line);color:var(--muted)}
.pill.key{border-color:#d9cffd;color:#5a3bd6;background:#f4f0ff}.pill.open{background:#eaf7ef;color:var(--get);border-color:#c5e8d4}
.pill.grpc{background:#eef3ff;color:var(--post);border-color:#cdd9f7}.pill.deprecated{background:#fdecea;color:var(--delete)}
.summary{font-weight:500}
table{border-collapse:collapse;width:100%;margin:.5em 0 1em;font-size:14px;background:#fff}
th,td{text-align:left;vertical-align:top;border-bottom:1px solid var(--line);padding:.45em .7em}
th{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);background:#f6f7fb}
td p{margin:.2em 0}
.req{font-size:11px;color:var(--delete);font-weight:600}
.type{color:#4b3bb0;font-size:13px}.fmt{color:var(--muted)}
.cons{color:var(--muted);font-size:12.5px}
.schema>.field{margin-bottom:.2em}
ul.fields{list-style:none;margin:.2em 0 .2em .2em;padding-left:1em;border-left:2px solid var(--line)}
ul.fields li{margin:.25em 0}
.desc{color:var(--muted);font-size:13.5px}.desc p{margin:.05em 0}
code.name{font-weight:600;background:none;padding:0;color:var(--fg)}
.media{margin:.4em 0}.mt{display:inline-block;font:12px ui-monospace,monospace;color:var(--muted);margin-bottom:.2em}
.response{margin:.6em 0;display:grid;grid-template-columns:3.6em 1fr;align-items:start}
.response>div>p:first-child{margin-top:0}
.status{font:700 12px/1 ui-monospace,monospace;border-radius:5px;padding:.3em .45em;margin-right:.3em;display:inline-block}
.status.ok{background:#e5f6ec;color:var(--get)}.status.redirect{background:#fff3dc;color:var(--put)}.status.err{background:#fdecea;color:var(--delete)}
details.errors{margin:.6em 0}.err-note{font-size:12px;color:var(--muted)}details.errors summary{cursor:pointer;color:var(--muted)}
details.errors>*:not(summary){margin-left:1em}
details.examples summary{cursor:pointer;color:var(--accent);font-size:13px}
.variant-block{border-left:3px solid #d9cffd;padding-left:.8em;margin:.6em 0}
.variant-feeds{font-size:12px;color:var(--muted);margin-bottom:.2em}
.variant{font-size:12px;color:var(--muted);margin-top:.3em}
.absent{color:var(--muted);font-style:italic}
.status-table td:nth-child(2){font-weight:600}
ul.files{padding-left:1.2em}
@media (max-width:900px){body{display:block}nav.side{position:static;width:auto;height:auto}main{padding:1em}}
`;
