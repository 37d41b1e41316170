import { createHash } from 'node:crypto';
import { cidrsOf, cidrWeights, type SpaceKind } from './address-space.ts';
import { bencode, type Bencodable } from './bencode.ts';
import { addressIn } from './ip-space.ts';
import { chance, int, pick, stableRng, weighted, zipfWeights } from './random.ts';
import { CATALOG, datedReleases, type TorrentSpec } from './torrent-catalog.ts';
import type { Rng, SimulatorDeps } from './types.ts';

export interface TorrentFile {
  /** Path inside the torrent joined with '/'; for a single-file torrent, the name itself. */
  path: string;
  length: number;
}

export interface BuiltTorrent {
  info_hash: string;
  name: string;
  magnet_uri: string;
  total_size: number;
  piece_length: number;
  file_count: number;
  files: TorrentFile[];
  trackers: readonly string[];
}

const MIN_PIECE = 16 * 1024;
const MAX_PIECE = 16 * 1024 * 1024;

/** The smallest power of two giving at most ~2,000 pieces, as mktorrent and qBittorrent choose. */
export function pieceLengthFor(totalSize: number): number {
  let p = MIN_PIECE;
  while (p < MAX_PIECE && totalSize / p > 2000) p *= 2;
  return p;
}

/**
 * Piece hashes stand in for the SHA-1 of content we do not have; they depend only on the name and the
 * piece count, so anyone holding the record can rebuild the info dict and check the info hash.
 */
export function placeholderPieces(name: string, totalSize: number, pieceLength: number): Buffer {
  const count = Math.ceil(totalSize / pieceLength);
  const out = Buffer.alloc(count * 20);
  for (let i = 0; i < count; i++)
    createHash('sha1')
      .update(`${name}#${i}`)
      .digest()
      .copy(out, i * 20);
  return out;
}

/** BEP 3 info dict: `length` for one file, `files` (path as a list of components) for several. */
export function infoDict(name: string, pieceLength: number, files: readonly TorrentFile[], singleFile: boolean): Bencodable {
  const total = files.reduce((s, f) => s + f.length, 0);
  const base = { name, 'piece length': pieceLength, pieces: placeholderPieces(name, total, pieceLength) };
  if (singleFile) return { ...base, length: total };
  return { ...base, files: files.map((f) => ({ length: f.length, path: f.path.split('/') })) };
}

export function magnetUri(infoHash: string, name: string, trackers: readonly string[]): string {
  const tr = trackers.map((t) => `&tr=${encodeURIComponent(t)}`).join('');
  return `magnet:?xt=urn:btih:${infoHash}&dn=${encodeURIComponent(name)}${tr}`;
}

const built = new Map<string, BuiltTorrent>();

/** Builds (once per name) the torrent a spec describes; lengths are jittered stably by name. */
export function buildTorrent(spec: TorrentSpec): BuiltTorrent {
  const hit = built.get(spec.name);
  if (hit) return hit;
  const r = stableRng(`torrent:${spec.name}`);
  const singleFile = spec.files.length === 1 && spec.files[0]![0] === '';
  const files = spec.files.map(([path, approx]) => ({
    path: singleFile ? spec.name : path,
    length: Math.max(1, Math.round(approx * (0.995 + r() * 0.01))),
  }));
  const total = files.reduce((s, f) => s + f.length, 0);
  const pieceLength = pieceLengthFor(total);
  const infoHash = createHash('sha1')
    .update(bencode(infoDict(spec.name, pieceLength, files, singleFile)))
    .digest('hex');
  const t: BuiltTorrent = {
    info_hash: infoHash,
    name: spec.name,
    magnet_uri: magnetUri(infoHash, spec.name, spec.trackers),
    total_size: total,
    piece_length: pieceLength,
    file_count: files.length,
    files,
    trackers: spec.trackers,
  };
  built.set(spec.name, t);
  return t;
}

interface Peer {
  ip: string;
  port: number;
  encrypted: boolean;
}

/** Leechers at home, a few phones, and seedboxes (which sit on Hetzner and OVH). */
const PEER_SPACE: ReadonlyArray<readonly [SpaceKind, number]> = [
  ['residential', 70],
  ['mobile', 5],
  ['hosting', 25],
];
const SEEDBOX_OWNERS = ['HETZNER', 'OVH', 'LEASEWEB', 'CONTABO'];

function freshPeer(rng: Rng): Peer {
  const space = weighted(rng, PEER_SPACE);
  const cidrs = space === 'hosting' ? cidrsOf(space, SEEDBOX_OWNERS) : cidrsOf(space);
  // Transmission's default 51413, the classic 6881-6889, otherwise qBittorrent's random listen port.
  const port = weighted(rng, [
    [51413, 15],
    [int(rng, 6881, 6889), 15],
    [int(rng, 1024, 65535), 70],
  ] as const);
  return { ip: addressIn(rng, weighted(rng, cidrWeights(cidrs))), port, encrypted: chance(rng, 0.55) };
}

const swarms = new Map<string, Peer[]>();

/** Each torrent's regulars: the same peers keep announcing, which is what TORRENTING intel needs. */
function swarm(name: string): Peer[] {
  let s = swarms.get(name);
  if (!s) {
    const r = stableRng(`swarm:${name}`);
    s = Array.from({ length: 48 }, () => freshPeer(r));
    swarms.set(name, s);
  }
  return s;
}

const catalogWeights = zipfWeights(CATALOG, 0.9);

export function createTorrentsGenerator(deps: SimulatorDeps) {
  return (tsMs: number) => {
    const { rng } = deps;
    const spec = chance(rng, 0.12) ? pick(rng, datedReleases(tsMs)) : weighted(rng, catalogWeights);
    const t = buildTorrent(spec);
    const regulars = swarm(t.name);
    const peers: Array<Peer & { source: string }> = [];
    const seen = new Set<string>();
    for (let n = int(rng, 3, 18); peers.length < n; ) {
      const p = chance(rng, 0.6) ? pick(rng, regulars) : freshPeer(rng);
      if (seen.has(p.ip)) {
        n--;
        continue;
      }
      seen.add(p.ip);
      const source = weighted(rng, [
        ['DHT', 45],
        ['PEX', 25],
        [t.trackers.length ? pick(rng, t.trackers) : 'DHT', 30],
      ] as const);
      peers.push({ ip: p.ip, port: p.port, source, encrypted: p.encrypted });
    }
    return {
      info_hash: t.info_hash,
      name: t.name,
      magnet_uri: t.magnet_uri,
      total_size: t.total_size,
      piece_length: t.piece_length,
      file_count: t.file_count,
      files: t.files.map((f) => ({ path: f.path, length: f.length })),
      peers,
      timestamp: Math.floor(tsMs / 1000),
    };
  };
}
