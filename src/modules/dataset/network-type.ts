import type { NetworkType } from '../lookup/ip-dataset.ts';

/**
 * network.type of an announced network, from its ASN and registered organisation name: curated ASN
 * groups first, then keyword rules on the name, else CORPORATE. Each group says where it comes from.
 * The holders named in the comments are those the packaged RouteViews/NRO/DB-IP data
 * (@ip-location-db/asn) registers for each ASN; network-type.test.ts checks that every curated ASN is
 * in that data and that a sample of them (and of the name rules) classify as their holders say.
 * The type is stored in ip-dataset.bin at build time: after changing a rule, run `umbra data build`.
 */
interface AsnGroup {
  type: NetworkType;
  source: string;
  asns: number[];
}

export const ASN_GROUPS: AsnGroup[] = [
  {
    type: 'DATACENTER',
    source:
      "cloud and hosting operators' own ASNs (registry records; the comments name each ASN's registered holder as the packaged ASN data gives it)",
    asns: [
      16509,
      14618,
      8987,
      38895, // Amazon / AWS
      15169,
      396982,
      19527,
      36040,
      139070, // Google, Google Cloud (396982), YouTube (36040)
      8075,
      8068,
      8069, // Microsoft / Azure
      13335,
      209242, // Cloudflare
      31898, // Oracle Cloud
      36351, // IBM Cloud (SoftLayer)
      45102,
      37963, // Alibaba Cloud
      132203,
      45090, // Tencent Cloud
      136907,
      55990, // Huawei Cloud
      14061, // DigitalOcean
      24940,
      213230, // Hetzner
      16276,
      35540, // OVHcloud
      63949,
      20940,
      16625, // Akamai (and Linode, AS63949)
      20473, // Vultr (The Constant Company)
      51167,
      40021, // Contabo
      60781,
      28753,
      16265,
      59253,
      7203, // Leaseweb
      12876, // Scaleway
      27357,
      33070,
      19994, // Rackspace
      9009,
      60068,
      212238, // M247, Datacamp (CDN77)
      54113, // Fastly
      199524, // G-Core Labs
      21859, // Zenlayer
      7979, // Servers.com
      8560,
      6724,
      8972, // IONOS, Strato, Host Europe
      26496,
      398101, // GoDaddy
      47583, // Hostinger
      36352,
      54290, // HostPapa (ex-ColoCrossing), Hostwinds
      40676,
      8100,
      29802,
      46475,
      32244,
      23470,
      14586,
      53667,
      11878, // US dedicated-server hosts
      197540,
      31034,
      36007,
      54825,
      57043,
      50673,
      49981,
      62240,
      42708,
      16125,
      4785,
      3214,
      51852, // European hosts
      200350,
      49505,
      9123, // Yandex Cloud, Selectel, Timeweb
      135377, // UCloud
      46606,
      26347,
      22612, // Unified Layer (Bluehost), DreamHost, Namecheap
    ],
  },
  {
    type: 'MOBILE',
    source: "mobile network operators' ASNs that carry their cellular customers (registry records; the comments name each holder)",
    asns: [
      21928, // T-Mobile USA
      6167,
      22394, // Cellco Partnership, Verizon Wireless
      20057, // AT&T Mobility
      55836, // Reliance Jio
      45609, // Bharti Airtel (mobile)
      38266,
      55410,
      45271, // Vodafone Idea
      25135, // Vodafone UK
      35228,
      29180, // Telefonica UK (O2)
      206067,
      13280, // Three UK, Three Ireland
      9808,
      56040,
      56041,
      56046,
      56047,
      56048, // China Mobile and its provincial networks
      16135, // Turkcell
      28403, // Telcel (Radiomovil Dipsa)
      26615, // TIM Brasil
      29465, // MTN Nigeria
      33771, // Safaricom
      23693, // Telkomsel
      9605, // NTT Docomo
      27831, // Colombia Movil (Tigo)
      44244,
      197207, // Irancell, MCI
      24499, // Telenor Pakistan
      30722, // Vodafone Italia
      138322, // Afghan Wireless Communication Company (AWCC)
      46347,
      29946,
      396181, // Carolina West Wireless, Union Wireless, SouthernLINC Wireless: US regional cellular carriers
    ],
  },
  {
    type: 'SATELLITE',
    source:
      "satellite operators' ASNs (the operators' registrations: SpaceX/Starlink, Hughes, Viasat, Inmarsat, Eutelsat/OneWeb, Intelsat, Telesat, Iridium, Globalstar, Thuraya, maritime VSAT providers)",
    asns: [
      14593,
      27277,
      53348, // SpaceX (Starlink)
      6621,
      1358,
      63062,
      12440,
      44795,
      17648,
      28613,
      266417,
      265705, // Hughes Network Systems (HughesNet)
      7155,
      40306,
      40310,
      40311,
      16491,
      46536, // Viasat
      31515,
      25222,
      31753,
      397496,
      152659, // Inmarsat
      800,
      15829,
      29137,
      34444,
      204276,
      29286,
      201935, // OneWeb, Eutelsat, Skylogic (Eutelsat broadband)
      22351,
      26243,
      46982, // Intelsat
      11919,
      16212,
      19036, // Telesat
      22184,
      398736,
      19458,
      44703, // Iridium, Globalstar, Thuraya
      135409,
      39356,
      328306, // Kacific, Avanti
      5377,
      8264,
      8841,
      14549,
      22218,
      24039,
      44933,
      55784,
      209980,
      210314, // Marlink (maritime VSAT)
      4913,
      5666,
      9229,
      9731,
      32034,
      38456,
      47339,
      273359, // Speedcast
    ],
  },
  {
    type: 'IN_FLIGHT_WIFI',
    source: "in-flight connectivity providers' ASNs (Panasonic Avionics, Gogo Business Aviation, Anuvu ex-Global Eagle)",
    asns: [64294, 132011, 394603, 11167, 400110],
  },
  {
    type: 'ACADEMIC',
    source:
      'research and education networks: GÉANT member NRENs and peers (GÉANT, Internet2, ESnet, CANARIE, AARNet, ...), and universities ' +
      'that hold their own ASN',
    asns: [
      20965,
      11537,
      293,
      6509,
      7575,
      38022,
      2603,
      24490, // GÉANT, Internet2, ESnet, CANARIE, AARNet, REANNZ, NORDUnet, TEIN
      786,
      680,
      2200,
      1103,
      559,
      137,
      766,
      1853,
      2611,
      2852,
      1741,
      224,
      1213,
      8501,
      5408,
      2108,
      378,
      1930, // European NRENs
      4538,
      2907,
      17579,
      1916,
      2018, // CERNET, SINET, KREONET (KISTI), RNP, TENET
      3,
      32,
      25,
      9,
      87,
      88,
      2637,
      7377,
      3582,
      4,
      3999, // MIT, Stanford, UC Berkeley, CMU, Indiana, Princeton, Georgia Tech, UCSD, Oregon, USC, Penn State
    ],
  },
  {
    type: 'GOVERNMENT',
    source: 'government registrants (ARIN records: DoD Network Information Center, NASA, IRS)',
    asns: [721, 27064, 27065, 27066, 5927, 297, 24, 30313],
  },
  {
    type: 'RESIDENTIAL',
    source: "consumer broadband ISPs' main ASNs (cable, DSL and fibre incumbents; the operators' own registrations)",
    asns: [
      7922,
      20115,
      11427,
      10796,
      20001,
      11426,
      12271,
      33363,
      7843,
      11351, // Comcast, Charter (Spectrum)
      22773,
      5650,
      7018,
      209,
      701,
      6128,
      30036, // Cox, Frontier, AT&T, CenturyLink, Verizon (Fios), Cablevision, Mediacom
      812,
      577,
      852,
      6327,
      5769, // Rogers, Bell Canada, TELUS, Shaw, Videotron
      3320,
      3215,
      12322,
      2856,
      5089,
      5607,
      13285,
      3352,
      3269,
      1136,
      33915,
      5432,
      3303,
      31334,
      6739,
      6830,
      5617,
      12874,
      6799,
      9121,
      12389, // Europe (6739: ONO cable, now Vodafone)
      1221,
      7545,
      4713,
      17676,
      4766,
      9318,
      3462,
      4134,
      4837,
      4788,
      9299,
      7552,
      45899, // Asia-Pacific
      8151,
      27699,
      18881,
      28573,
      22927,
      7303, // Latin America
    ],
  },
];

const BY_ASN = new Map<number, AsnGroup>();
for (const g of ASN_GROUPS) for (const a of g.asns) BY_ASN.set(a, g);

/**
 * Keyword rules on the registered organisation name, first match wins; checked against samples of
 * the 91k names in the packaged ASN data (e.g. most names with "Wireless" are fixed-wireless ISPs,
 * not mobile carriers; "Hughes Federal Credit Union" and "Starlink Crimea" are not satellite networks).
 */
const BY_NAME: Array<[RegExp, NetworkType]> = [
  // Banks and credit unions run company networks, whatever else their names say ("University Federal Credit Union").
  [/\b(CREDIT UNION|BANK|BANCO|BANQUE)\b/i, 'CORPORATE'],
  [
    /\b(IN-?FLIGHT (CONNECTIVITY|WI-?FI|INTERNET|ENTERTAINMENT)|PANASONIC AVIONICS|GOGO (BUSINESS AVIATION|LLC|INC)|ANUVU|GLOBAL EAGLE|SMARTSKY)\b/i,
    'IN_FLIGHT_WIFI',
  ],
  [
    /\b(SATELLITES?|SATELITAL|SATELITE|VSAT|SPACE EXPLORATION TECHNOLOGIES|HUGHES (NETWORK|COMMUNICATIONS|TELECOMUNICACOES)|INMARSAT|VIASAT|IRIDIUM SATELLITE|EUTELSAT|ONEWEB|INTELSAT|GLOBALSTAR|SKYLOGIC|MARLINK|SPEEDCAST|KACIFIC)\b/i,
    'SATELLITE',
  ],
  [
    /\b(UNIVERSITY|UNIVERSIT(AT|ÄT|Y|A|E|É|EIT|ET|AS|ATEA)|UNIVERSIDAD|UNIVERSIDADE|UNIWERSYTET|HOCHSCHULE|COLLEGE|POLYTECHNIC|POLITECNICO|POLITECHNIKA|INSTITUTE OF TECHNOLOGY|ACADEMY OF SCIENCES?|ACADEMIC|RESEARCH (AND|&) EDUCATION|EDUCATION (AND|&) RESEARCH|EDUCATION(AL)? NETWORK|RESEARCH NETWORK|FORSCHUNGSNETZ|ENSINO E PESQUISA|SCHOOL DISTRICT|PUBLIC SCHOOLS|HIGHER (PROFESSIONAL )?EDUCATION)\b/i,
    'ACADEMIC',
  ],
  [
    /\b(GOVERNMENT|GOVT|MINISTRY|MINISTERIO|MINISTERE|MINISTERIUM|BUNDESAMT|DEPARTMENT OF (DEFEN[CS]E|STATE|JUSTICE|ENERGY|HOMELAND|VETERANS|HEALTH|THE TREASURY|AGRICULTURE|TRANSPORTATION|COMMERCE|LABOR|THE INTERIOR|ADMINISTRATION|EDUCATION|TECHNOLOGY|INFORMATION TECHNOLOGY|REVENUE|CORRECTIONS|MOTOR VEHICLES)|FEDERAL STATE (BUDGETARY|UNITARY|AUTONOMOUS|INSTITUTION)|DOD NETWORK|CITY OF|COUNTY OF|COUNTY( GOVERNMENT)?$|STATE OF|COMMONWEALTH OF|MUNICIPALITY|MUNICIPAL|PREFECTURE|PARLIAMENT|NATIONAL AERONAUTICS AND SPACE|INTERNAL REVENUE SERVICE|ARMED FORCES|AIR FORCE)\b/i,
    'GOVERNMENT',
  ],
  [
    /\b(HOSTING|HOSTER|WEBHOST(ING)?|HOST|CLOUD|DATA ?CENT(ER|RE)S?|SERVERS?|VPS|VDS|COLO(CATION)?|DEDICATED|COMPUTE|CDN|CONTENT DELIVERY|IDC|HETZNER|OVH|DIGITALOCEAN|LINODE|VULTR|LEASEWEB|CONTABO|CHOOPA|M247|DATACAMP)\b/i,
    'DATACENTER',
  ],
  [/\b(MOBILE|MOBILITY|CELLULAR|CELLCO|LTE|5G|GSM|TELCEL|MOVIL|MÓVIL|MOBILFUNK|T-MOBILE|TELKOMSEL|VODAFONE)\b/i, 'MOBILE'],
  [
    /\b(WIRELESS|WISP|TELECOMS?|TELEKOM|TELECOMUNICA\w*|TELECOMMUNICATIONS?|BROADBAND|CABLE|CABLEVISION|COMMUNICATIONS?|INTERNET SERVICES?|INTERNET PROVIDER|ISP|FIBRE|FIBER|FIBRA|DSL|TELEPHONE|TELEFONICA|TELCO|NETWORKS?|COMCAST|CHARTER|VERIZON|AT&T|ORANGE|TELSTRA)\b/i,
    'RESIDENTIAL',
  ],
];

export interface NetworkTypeVerdict {
  type: NetworkType;
  /** Which rule decided: `asn: <group source>`, `name: <pattern>` or `default`. */
  rule: string;
}

/** The type and the rule that gave it (for evidence and tests). */
export function explainNetworkType(asn: number, name: string): NetworkTypeVerdict {
  const group = BY_ASN.get(asn);
  if (group) return { type: group.type, rule: `asn: ${group.source}` };
  for (const [re, type] of BY_NAME) if (re.test(name)) return { type, rule: `name: ${re.source}` };
  // An organisation that is none of the above runs its own network: a company, most likely.
  return { type: 'CORPORATE', rule: 'default' };
}

export function classifyNetwork(asn: number, name: string): NetworkType {
  return explainNetworkType(asn, name).type;
}

export const NETWORK_TYPES: NetworkType[] = [
  'MOBILE',
  'SATELLITE',
  'IN_FLIGHT_WIFI',
  'RESIDENTIAL',
  'CORPORATE',
  'ACADEMIC',
  'DATACENTER',
  'GOVERNMENT',
  'UNKNOWN',
];
