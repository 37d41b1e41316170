/**
 * Legally shareable torrents that dominate real DHT crawls: distribution ISOs, Blender open movies,
 * public-domain films, Creative Commons music and research datasets. Sizes are approximate bytes; the
 * builder jitters them per title (stably) so lengths look measured rather than round.
 */
export interface TorrentSpec {
  /** The info dict's name: the file name of a single-file torrent, the top folder otherwise. */
  name: string;
  /** Paths inside the torrent (empty for a single-file torrent) with approximate lengths. */
  files: ReadonlyArray<readonly [string, number]>;
  trackers: readonly string[];
}

export const PUBLIC_TRACKERS = [
  'udp://tracker.opentrackr.org:1337/announce',
  'udp://open.stealth.si:80/announce',
  'udp://tracker.torrent.eu.org:451/announce',
  'udp://exodus.desync.com:6969/announce',
  'udp://open.demonii.com:1337/announce',
  'udp://tracker.openbittorrent.com:6969/announce',
] as const;

const [OPENTRACKR, STEALTH, TORRENT_EU, DESYNC, DEMONII] = PUBLIC_TRACKERS;
const UBUNTU = ['https://torrent.ubuntu.com/announce', 'https://ipv6.torrent.ubuntu.com/announce'];
const DEBIAN = ['http://bttracker.debian.org:6969/announce'];
const FEDORA = ['http://torrent.fedoraproject.org:6969/announce'];
const WEBTORRENT = ['udp://explodie.org:6969', 'wss://tracker.btorrent.xyz', 'wss://tracker.openwebtorrent.com'];
const ACADEMIC = ['https://academictorrents.com/announce.php', OPENTRACKR];
const COMMON = [OPENTRACKR, STEALTH, TORRENT_EU, DESYNC, DEMONII];

const single = (name: string, size: number, trackers: readonly string[] = COMMON): TorrentSpec => ({ name, files: [['', size]], trackers });
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** Most popular first (the generator weights them Zipf-like in this order). */
export const CATALOG: readonly TorrentSpec[] = [
  single('ubuntu-24.04.1-desktop-amd64.iso', 6_203_355_136, UBUNTU),
  single('debian-12.7.0-amd64-netinst.iso', 661_651_456, DEBIAN),
  {
    name: 'Big Buck Bunny',
    files: [
      ['Big Buck Bunny.en.srt', 140],
      ['Big Buck Bunny.mp4', 276_134_947],
      ['poster.jpg', 310_380],
    ],
    trackers: WEBTORRENT,
  },
  single('ubuntu-24.04.1-live-server-amd64.iso', 2_773_874_688, UBUNTU),
  single('kali-linux-2024.3-installer-amd64.iso', 4.2 * GiB, COMMON),
  single('linuxmint-22-cinnamon-64bit.iso', 2.8 * GiB),
  single('Fedora-Workstation-Live-x86_64-40-1.14.iso', 2_295_853_056, FEDORA),
  {
    name: 'Sintel',
    files: [
      ['Sintel.mp4', 129_241_752],
      ['Sintel.en.srt', 1514],
      ['Sintel.de.srt', 1652],
      ['Sintel.fr.srt', 1554],
      ['poster.jpg', 46_115],
    ],
    trackers: WEBTORRENT,
  },
  {
    name: 'Night of the Living Dead (1968) [1080p]',
    files: [
      ['Night.of.the.Living.Dead.1968.1080p.BluRay.x264.mkv', 7.9 * GiB],
      ['Night.of.the.Living.Dead.1968.1080p.BluRay.x264.en.srt', 62_000],
      ['README.txt', 1_200],
    ],
    trackers: COMMON,
  },
  single('ubuntu-22.04.5-desktop-amd64.iso', 4_762_707_968, UBUNTU),
  single('FreeBSD-14.1-RELEASE-amd64-disc1.iso', 1.24 * GiB),
  {
    name: 'Tears of Steel',
    files: [
      ['tears_of_steel_1080p.mov', 584 * MiB],
      ['tears_of_steel_1080p.en.srt', 4_200],
      ['tears_of_steel_1080p.es.srt', 4_350],
    ],
    trackers: WEBTORRENT,
  },
  {
    name: 'Nine Inch Nails - The Slip (2008) [FLAC]',
    files: [
      '01 - 999,999.flac',
      '02 - 1,000,000.flac',
      '03 - Letting You.flac',
      '04 - Discipline.flac',
      '05 - Echoplex.flac',
      '06 - Head Down.flac',
      '07 - Lights in the Sky.flac',
      '08 - Corona Radiata.flac',
      '09 - The Four of Us Are Dying.flac',
      '10 - Demon Seed.flac',
    ]
      .map((f, i) => [f, (18 + ((i * 7) % 23)) * MiB] as const)
      .concat([['cover.jpg', 1_843_000]]),
    trackers: COMMON,
  },
  single('debian-live-12.7.0-amd64-kde.iso', 3.1 * GiB, DEBIAN),
  {
    name: 'Nosferatu (1922) [1080p] [restored]',
    files: [
      ['Nosferatu.1922.1080p.BluRay.x264.mkv', 5.4 * GiB],
      ['Nosferatu.1922.1080p.BluRay.x264.en.srt', 18_000],
    ],
    trackers: COMMON,
  },
  {
    name: 'COCO 2017',
    files: [
      ['train2017.zip', 19_336_861_798],
      ['val2017.zip', 815_585_330],
      ['annotations_trainval2017.zip', 252_907_541],
    ],
    trackers: ACADEMIC,
  },
  single('Rocky-9.4-x86_64-dvd.iso', 10.2 * GiB),
  {
    name: 'LibriSpeech',
    files: [
      ['train-clean-100.tar.gz', 6_387_309_499],
      ['dev-clean.tar.gz', 337_926_286],
      ['test-clean.tar.gz', 346_663_984],
    ],
    trackers: ACADEMIC,
  },
  {
    name: 'Steamboat Willie (1928)',
    files: [
      ['Steamboat.Willie.1928.1080p.mp4', 412 * MiB],
      ['Steamboat.Willie.1928.en.srt', 900],
    ],
    trackers: COMMON,
  },
  {
    name: 'Cosmos Laundromat',
    files: [
      ['Cosmos_Laundromat_1080p.mkv', 1.1 * GiB],
      ['Cosmos_Laundromat.en.srt', 9_800],
    ],
    trackers: WEBTORRENT,
  },
  single('tails-amd64-6.7.img', 1.42 * GiB),
  single('manjaro-kde-24.0.6-240729-linux69.iso', 3.9 * GiB),
  {
    name: 'The General (1926) [720p]',
    files: [
      ['The.General.1926.720p.BluRay.x264.mkv', 3.3 * GiB],
      ['The.General.1926.720p.BluRay.x264.en.srt', 11_000],
    ],
    trackers: COMMON,
  },
  {
    name: 'Plan 9 from Outer Space (1957)',
    files: [
      ['Plan.9.from.Outer.Space.1957.720p.mp4', 1.6 * GiB],
      ['Plan.9.from.Outer.Space.1957.en.srt', 70_000],
    ],
    trackers: COMMON,
  },
];

/** Releases that change with the calendar, so the feed keeps seeing new hashes as days go by. */
export function datedReleases(tsMs: number): TorrentSpec[] {
  const d = new Date(tsMs);
  const y = d.getUTCFullYear();
  const mm = String(d.getUTCMonth() + 1).padStart(2, '0');
  // The OSM planet file is cut weekly (on Mondays) and named by that date, YYMMDD.
  const monday = new Date(Date.UTC(y, d.getUTCMonth(), d.getUTCDate() - ((d.getUTCDay() + 6) % 7)));
  const planet = monday.toISOString().slice(2, 10).replaceAll('-', '');
  return [
    single(`archlinux-${y}.${mm}.01-x86_64.iso`, 1.15 * GiB),
    single(`planet-${planet}.osm.pbf`, 78 * GiB, ACADEMIC),
    single(`enwiki-${y}${mm}01-pages-articles-multistream.xml.bz2`, 21.8 * GiB, ACADEMIC),
  ];
}
