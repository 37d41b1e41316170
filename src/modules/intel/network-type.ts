import type { NetworkType } from '../lookup/intel-source.ts';

/**
 * First classification of a network by its ASN and registered name. A later issue refines it with
 * curated ASN lists; each rule here says where it comes from.
 */
const BY_ASN: Record<number, NetworkType> = {
  // Cloud and hosting providers (their own published ASNs).
  16509: 'DATACENTER', 14618: 'DATACENTER', 8987: 'DATACENTER', // Amazon AWS
  15169: 'DATACENTER', 396982: 'DATACENTER', 19527: 'DATACENTER', // Google, Google Cloud
  8075: 'DATACENTER', 8068: 'DATACENTER', // Microsoft / Azure
  13335: 'DATACENTER', 209242: 'DATACENTER', // Cloudflare
  14061: 'DATACENTER', 24940: 'DATACENTER', 16276: 'DATACENTER', 63949: 'DATACENTER', 20473: 'DATACENTER',
  31898: 'DATACENTER', 45102: 'DATACENTER', 132203: 'DATACENTER', 36352: 'DATACENTER', 51167: 'DATACENTER',
  12876: 'DATACENTER', 9009: 'DATACENTER', 60068: 'DATACENTER', 212238: 'DATACENTER', 62567: 'DATACENTER',
  // Mobile carriers (operators' registered mobile ASNs).
  21928: 'MOBILE', 6167: 'MOBILE', 22394: 'MOBILE', 20057: 'MOBILE', 3651: 'MOBILE', 45609: 'MOBILE',
  // Satellite: Starlink (SpaceX), HughesNet, Viasat, Inmarsat.
  14593: 'SATELLITE', 6621: 'SATELLITE', 7155: 'SATELLITE', 31515: 'SATELLITE',
  // In-flight Wi-Fi: Gogo/Intelsat, Panasonic Avionics, Anuvu (Global Eagle).
  19972: 'IN_FLIGHT_WIFI', 394354: 'IN_FLIGHT_WIFI', 22351: 'IN_FLIGHT_WIFI', 64294: 'IN_FLIGHT_WIFI',
  // Research and education networks: Internet2, GEANT.
  11537: 'ACADEMIC', 20965: 'ACADEMIC',
};

/** Keyword rules on the registered organisation name, first match wins. */
const BY_NAME: Array<[RegExp, NetworkType]> = [
  [/\b(IN-?FLIGHT|INFLIGHT|AVIONICS|GOGO|AIRLINE)\b/i, 'IN_FLIGHT_WIFI'],
  [/\b(SATELLITE|STARLINK|VSAT|HUGHES|INMARSAT|VIASAT|IRIDIUM)\b/i, 'SATELLITE'],
  [/\b(UNIVERSITY|UNIVERSITAT|UNIVERSIDAD|UNIVERSITE|COLLEGE|INSTITUTE OF TECHNOLOGY|ACADEMY OF SCIENCES|RESEARCH AND EDUCATION|SCHOOL DISTRICT|EDUCATION NETWORK)\b/i, 'ACADEMIC'],
  [/\b(GOVERNMENT|MINISTRY|MINISTERIO|DEPARTMENT OF|FEDERAL|MUNICIPAL|CITY OF|STATE OF|COUNTY OF|DOD NETWORK|PARLIAMENT)\b/i, 'GOVERNMENT'],
  [/\b(HOSTING|HOSTER|CLOUD|DATA ?CENT(ER|RE)|SERVERS?|VPS|COLO(CATION)?|DEDICATED|COMPUTE|HETZNER|OVH|DIGITALOCEAN|LINODE|VULTR|LEASEWEB|CONTABO|CHOOPA|M247|DATACAMP)\b/i, 'DATACENTER'],
  [/\b(MOBILE|MOBILITY|WIRELESS|CELLULAR|LTE|5G|GSM|TELCEL|VODAFONE|T-MOBILE|MOVISTAR)\b/i, 'MOBILE'],
  [/\b(TELECOM|TELEKOM|TELECOMUNICA|BROADBAND|CABLE|COMMUNICATIONS|INTERNET SERVICE|ISP|FIBRE|FIBER|DSL|NETWORKS?|TELEPHONE|TELEFONICA|COMCAST|CHARTER|VERIZON|AT&T|ORANGE|TELSTRA)\b/i, 'RESIDENTIAL'],
];

export function classifyNetwork(asn: number, name: string): NetworkType {
  const known = BY_ASN[asn];
  if (known) return known;
  for (const [re, type] of BY_NAME) if (re.test(name)) return type;
  // An organisation that is none of the above runs its own network: a company, most likely.
  return 'CORPORATE';
}

export const NETWORK_TYPES: NetworkType[] = ['MOBILE', 'SATELLITE', 'IN_FLIGHT_WIFI', 'RESIDENTIAL', 'CORPORATE', 'ACADEMIC', 'DATACENTER', 'GOVERNMENT', 'UNKNOWN'];
