import type { NetworkType, NetworkTypeSource } from '../lookup/ip-dataset.ts';

/**
 * network.type of an announced network, from its ASN and registered organisation name: curated ASN
 * groups first, then keyword rules on the name, else UNKNOWN. Each group and rule says where it comes
 * from, and the verdict carries it (stored in the dataset, shown by `?explain=true`).
 * The holders named in the comments are those the packaged RouteViews/NRO/DB-IP data
 * (@ip-location-db/asn) registers for each ASN; network-type.test.ts checks that every curated ASN is
 * in that data and that a sample of them (and of the name rules) classify as their holders say.
 * The groups hold every ASN of the 400 largest by announced IPv4 space whose business public sources
 * tell (the operators' own descriptions); the data-quality report measures the rules against hand
 * labels kept apart from them (test/fixtures/network-type-labels.json, docs/intelligence.md).
 * The type is stored in ip-dataset.bin at build time: after changing a rule, run `umbra data build`.
 */
interface AsnGroup {
  /** Short name of the group, as `?explain=true` gives it. */
  name: string;
  type: NetworkType;
  /** Where the group's knowledge comes from. */
  source: string;
  asns: number[];
}

export const ASN_GROUPS: AsnGroup[] = [
  {
    name: 'cloud and hosting operators',
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
      202425,
      30058,
      43350,
      24875, // IP Volume, FDCservers, NForce Entertainment, NovoServe: dedicated-server hosts without a telling word in their names
      46844,
      32097,
      210644,
      397423,
      62904,
      35916,
      33387,
      9370,
      18779,
      133752,
      60404, // Sharktech, WholeSale Internet, Aeza, Tier.Net, Eonix, Multacom, Nocix, Sakura Internet, EGIHosting, Leaseweb HK, The Infrastructure Group
      137718,
      23724,
      15830,
      150436, // Volcano Engine, China Telecom's data centres (IDC), Equinix data centres, BytePlus
      203020,
      4694,
      14340,
      8426, // HostRoyale hosting, IDC Frontier data centres and cloud, Salesforce's cloud, Claranet managed hosting
    ],
  },
  {
    name: 'mobile operators',
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
      26599, // Telefonica Brasil's Vivo mobile network (its fixed network is AS18881, AS27699)
      6805, // Telefonica Germany (O2)
      1267, // WIND TRE
      9644, // SK Telecom
      36992,
      37069,
      24835, // Etisalat Misr, Orange Egypt (Mobinil), Vodafone Egypt
      26611, // Claro Colombia (Comcel)
      12430, // Vodafone Spain (its cable network is AS6739, ONO)
      4761,
      45727, // Indosat Ooredoo Hutchison
      16637, // MTN South Africa
      37693, // Ooredoo Tunisia
      36925,
      36903, // Orange Maroc (Meditel), Maroc Telecom's mobile network
      25400, // Telia Norway (ex-NetCom)
      35819, // Mobily (Etihad Etisalat)
      12400, // Partner Communications
      31133,
      25159, // MegaFon
      15895, // Kyivstar
      134927,
      55644, // Vodafone Idea
      132199, // Globe Telecom
      9587, // DTAC
      38466, // U Mobile
      12252, // America Movil Peru (Claro)
      56045,
      24445,
      6306,
      37492,
      24444,
      29975, // China Mobile provincial mobile network, China Mobile provincial mobile network, Movistar Venezuela mobile, Orange Tunisia, China Mobile provincial mobile network, Vodacom mobile
      50266,
      9674,
      16232,
      37168,
      17421,
      9141, // Odido (ex-T-Mobile Netherlands), Far EasTone mobile, TIM Italy's mobile network, Cell C mobile, Chunghwa Telecom's mobile network, Play (P4) mobile
      8412,
      9050,
      36926,
      36884, // Magenta (T-Mobile Austria), Orange Romania, Airtel Kenya mobile, inwi (Wana) mobile
      36974,
      36935,
      16019,
      12714,
      15802,
      3329, // MTN Côte d'Ivoire mobile, Vodafone Egypt mobile data, Vodafone Czech Republic, MegaFon mobile, du, Vodafone Greece
      12091,
      133612,
      12912,
      37075,
      30986,
      51207, // MTN South Africa mobile, Vodafone Australia mobile, T-Mobile Poland, Airtel Uganda mobile, MTN Ghana (Scancom) mobile, Free Mobile
      55831,
      12302,
      44034,
      13036,
      24608,
      37287, // Aircel mobile, Vodafone Romania, Tre Sweden (Hi3G) mobile, T-Mobile Czech Republic, WIND TRE (ex-H3G) mobile, Zain Zambia mobile
      47377, // Orange Belgium
    ],
  },
  {
    name: 'satellite operators',
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
    name: 'in-flight connectivity',
    type: 'IN_FLIGHT_WIFI',
    source: "in-flight connectivity providers' ASNs (Panasonic Avionics, Gogo Business Aviation, Anuvu ex-Global Eagle)",
    asns: [64294, 132011, 394603, 11167, 400110],
  },
  {
    name: 'research and education networks',
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
      1659,
      237, // TANet (Taiwan), Merit Network (Michigan)
      553,
      81,
      2152,
      1101,
      3479,
      210, // University of Stuttgart, MCNC, CENIC, SURFnet, University System of Georgia, Utah Education Network
      376,
      7497,
      600, // RISQ, CSTNET, OARnet
    ],
  },
  {
    name: 'government networks',
    type: 'GOVERNMENT',
    source: 'government registrants (registry records: US DoD, NASA, IRS, USDA, USPS, UK Ministry of Defence, China eGovNet)',
    asns: [
      721,
      27064,
      27065,
      27066,
      5927,
      297,
      24,
      30313,
      749,
      56,
      367,
      306,
      668,
      1540, // US Department of Defense and its Network Information Center, US Army (USAISC)
      270,
      4155,
      5774,
      1761, // NASA, USDA, US Postal Service, Texas General Services Commission
      203665, // UK Ministry of Defence
      37937, // China eGovNet
      5972, // DoD Network Information Center
      4010,
      22284,
      1226,
      3633, // US Army Information Systems Command, US Department of the Interior, California Department of Technology, Province of British Columbia
    ],
  },
  {
    name: 'consumer ISPs',
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
      2516, // KDDI
      15557, // SFR
      17858,
      3786, // LG U+ (LG Powercomm, LG Dacom)
      3301,
      1759,
      1257, // Telia Sweden, Telia Finland, Tele2 Sweden
      4804, // Optus
      9829, // BSNL
      9824, // J:COM
      4230, // Claro Brasil (Embratel)
      8359, // MTS
      3209, // Vodafone Germany's DSL and cable network (Arcor, Kabel Deutschland), not its mobile network
      5378, // Vodafone UK's fixed network (its mobile network is AS25135)
      7029,
      6389,
      19901,
      6079,
      19108,
      16591, // Windstream, AT&T (BellSouth), Brightspeed, RCN, Suddenlink, Google Fiber
      5410,
      12479,
      3292,
      8447,
      5384,
      8434,
      9158,
      2119,
      6848,
      719,
      3243,
      2860,
      5483,
      5610,
      12741, // Bouygues, Orange Spain, TDC, A1, Etisalat, Telenor (SE, DK, NO), Telenet, Elisa, MEO, NOS, Magyar Telekom, O2 CZ, Netia
      3216,
      9049,
      6849,
      6697, // Vimpelcom (Beeline), ER-Telecom, Ukrtelecom, Beltelecom
      8452,
      6713,
      36947,
      25019,
      58224,
      17557, // Telecom Egypt, Maroc Telecom, Algerie Telecom, STC, TCI (Iran), PTCL
      4812,
      4808,
      9394,
      17816, // China Telecom and China Unicom provincial networks, China Tietong
      17506,
      2527,
      2518,
      17511,
      7713,
      24560, // ARTERIA, Sony (So-net), BIGLOBE, OPTAGE, Telkom Indonesia, Airtel broadband
      8167,
      3816,
      13489,
      7418,
      8048,
      6057,
      6147,
      28006, // V.tal, Movistar Colombia, Tigo UNE, Movistar Chile, CANTV, ANTEL, Movistar Peru, CNT
      13999,
      6871,
      9304,
      6730,
      11404,
      10013, // Megacable, BT consumer broadband (Plusnet), HGC, Sunrise, Wave Broadband (Astound) cable, FreeBit
      8402,
      4725,
      16086,
      10620,
      8881,
      4181, // Beeline fixed broadband (ex-Corbina), SoftBank consumer broadband (ex-ODN), DNA, Claro Colombia fixed broadband (ex-Telmex), 1&1 consumer DSL, TDS Telecom
      4760,
      8708,
      5713,
      9924,
      34984,
      7738, // PCCW Netvigator broadband, Digi Romania cable and fibre, Telkom South Africa, Taiwan Fixed Network broadband, Superonline (Turkcell's fixed broadband), V.tal (Oi) fixed broadband
      24863,
      1680,
      9812,
      22047,
      9269,
      4780, // LINKdotNET, Cellcom Israel fixed line broadband, Oriental Cable Network, VTR, HKBN consumer broadband, SEEDNet
      10010,
      11830,
      2519,
      9198,
      327934,
      18403, // TOKAI Communications consumer ISP, ICE, ARTERIA apartment broadband, Kazakhtelecom, Tunisie Telecom, FPT Telecom consumer broadband
      18126,
      11492,
      17552, // Chubu Telecommunications (commufa) consumer ISP, Cable One cable broadband, True Internet consumer broadband
      4685,
      8551,
      22561,
      37457,
      9416,
      7459, // Asahi Net, Bezeq International consumer ISP, CenturyLink (Embarq) consumer broadband, Telkom South Africa, Taiwanese cable operator, Grande Communications cable
      23969,
      9617,
      29695,
      5391,
      5466,
      11776, // TOT (NT), J:COM cable, Lyse (Altibox) fibre broadband, Hrvatski Telekom, eir, Breezeline cable
      17488,
      29256,
      17429,
      11556,
      9506,
      23889, // Hathway cable broadband, Syrian Telecom, Beijing Gehua cable TV and broadband, Cable & Wireless Panama, Singtel consumer broadband (Magix), Mauritius Telecom
      45758,
      23700,
      9145,
      4739,
      7992,
      4811, // 3BB (Triple T Broadband), First Media cable broadband, EWE TEL consumer broadband, iiNet consumer broadband, Cogeco cable, China Telecom consumer network
    ],
  },
  {
    name: 'transit carriers',
    type: 'CORPORATE',
    source:
      "backbone carriers' ASNs: transit and enterprise services, no consumer access lines (the operators' own descriptions of their networks)",
    asns: [
      3356,
      3549,
      3561,
      174,
      1239, // Lumen (Level 3, Global Crossing, Savvis), Cogent (and ex-Sprint)
      3257,
      2914,
      1299,
      6453,
      6762,
      6461,
      6939,
      3491,
      4637,
      5511,
      12956,
      9002,
      20485, // GTT, NTT, Arelion, Tata, Sparkle, Zayo, Hurricane Electric, PCCW Global, Telstra International, Orange International, Telefonica Global, RETN, TransTelecom
      2828,
      702,
      1273,
      9498,
      4847,
      2497,
      3741, // Verizon Business (XO, EMEA), Vodafone (ex-Cable & Wireless), Airtel backbone, China Networks Inter-Exchange, IIJ, Dimension Data
      2514,
      2116,
      4755,
      7385,
      8220,
      2686, // NTT PC Communications, GlobalConnect Norway, Tata Communications India, Allstream business services, Colt, AT&T Global Network Services
      51964, // Orange Business Services
      5006,
      6535,
      37100,
      20676,
      9583, // Inteliquent, Telmex Chile business services, SEACOM, Plusnet Germany business carrier, Sify
    ],
  },
  {
    name: 'enterprise networks',
    type: 'CORPORATE',
    source: "large companies' own networks (registry records name the company; none sells network access)",
    asns: [
      714,
      521,
      31399,
      6253,
      4249,
      10794,
      11003,
      7054,
      209502, // Apple, Ford, Mercedes-Benz, Prudential, Eli Lilly, Bank of America, Procter & Gamble, Merck, EDF
      10695,
      2510,
      1766,
      8729, // Walmart corporate network, Fujitsu corporate network, Exxon Mobil corporate network, Credit Suisse corporate network
      5619,
      6619,
      6878,
      72,
      109,
      18676, // TietoEVRY IT services network, Samsung SDS corporate network, T-Systems, Schlumberger corporate network, Cisco corporate network, Avaya corporate network
      30383,
      1958,
      7792,
      158, // General Motors corporate network, NCR corporate network, 3M corporate network, Ericsson corporate network
    ],
  },
];

const BY_ASN = new Map<number, AsnGroup>();
for (const g of ASN_GROUPS) for (const a of g.asns) BY_ASN.set(a, g);

/** One keyword rule: the type it gives, what the words mean, and the words. */
interface NameRule {
  type: NetworkType;
  /** Why those words mean that type, as `?explain=true` gives it. */
  means: string;
  re: RegExp;
}

/**
 * Keyword rules on the registered organisation name, first match wins; checked against samples of
 * the 91k names in the packaged ASN data (e.g. most names with "Wireless" are fixed-wireless ISPs,
 * not mobile carriers; "Hughes Federal Credit Union" and "Starlink Crimea" are not satellite networks;
 * "Vodafone" names fixed networks too, so fixed-access words come before the mobile brands, and the
 * large fixed Vodafone networks are curated).
 */
const BY_NAME: NameRule[] = [
  // Banks and credit unions run company networks, whatever else their names say ("University Federal Credit Union").
  {
    type: 'CORPORATE',
    means: 'a bank or insurer: its own company network',
    re: /\b(CREDIT UNION|BANK|BANCO|BANQUE|PANKKI|SPARKASSE|INSURANCE|ASSURANCES?|VERSICHERUNG\w*|SEGUROS|MUTUELLE|CASUALTY|FINANCIAL|SECURITIES|INVESTMENTS?|CAPITAL|ASSET MANAGEMENT)\b/i,
  },
  {
    // Registries and exchange points have "Internet" in their names but serve no users.
    type: 'CORPORATE',
    means: 'an Internet registry or exchange point: infrastructure, no users',
    re: /\b(REGISTRATION AUTHORITY|REGISTRY|INTERNET EXCHANGE|EXCHANGE POINT)\b/i,
  },
  {
    type: 'IN_FLIGHT_WIFI',
    means: 'an in-flight connectivity provider',
    re: /\b(IN-?FLIGHT (CONNECTIVITY|WI-?FI|INTERNET|ENTERTAINMENT)|PANASONIC AVIONICS|GOGO (BUSINESS AVIATION|LLC|INC)|ANUVU|GLOBAL EAGLE|SMARTSKY)\b/i,
  },
  {
    type: 'SATELLITE',
    means: 'a satellite operator',
    re: /\b(SATELLITES?|SATELITAL|SATELITE|VSAT|SPACE EXPLORATION TECHNOLOGIES|HUGHES (NETWORK|COMMUNICATIONS|TELECOMUNICACOES)|INMARSAT|VIASAT|IRIDIUM SATELLITE|EUTELSAT|ONEWEB|INTELSAT|GLOBALSTAR|SKYLOGIC|MARLINK|SPEEDCAST|KACIFIC)\b/i,
  },
  {
    type: 'ACADEMIC',
    means: 'a university, school or research network',
    // Registry data spells "Universität" as "Universitaet" too; "Università" ends in a letter \b does not know, hence (?!\w).
    re: /\b(UNIVERSITY|UNIVERSIT(AT|AET|ÄT|Y|A|À|E|É|EIT|ET|AS|ATEA)|UNIVERSIDAD|UNIVERSIDADE|UNIWERSYTET|HOCHSCHULE|COLLEGE|POLYTECHNIC|POLITECNICO|POLITECHNIKA|INSTITUTE OF TECHNOLOGY|ACADEMY OF SCIENCES?|ACADEMIC|RESEARCH (AND|&) EDUCATION|EDUCATION (AND|&) RESEARCH|EDUCATION(AL)? NETWORK|RESEARCH NETWORK|FORSCHUNGSNETZ|ENSINO E PESQUISA|SCHOOL DISTRICT|PUBLIC SCHOOLS|HIGHER (PROFESSIONAL )?EDUCATION|SCHOOLS?|ECOLE|ÉCOLE|RESEARCH INSTITUTE|INSTITUTE OF SCIENCE)(?!\w)/i,
  },
  {
    type: 'GOVERNMENT',
    means: 'a public body',
    re: /\b(GOVERNMENT|GOVT|PEMERINTAH|E-?GOVERNANCE|MINISTRY|MINISTERIO|MINISTERE|MINISTERIUM|BUNDESAMT|DEPARTMENT OF (DEFEN[CS]E|STATE|JUSTICE|ENERGY|HOMELAND|VETERANS|HEALTH|THE TREASURY|AGRICULTURE|TRANSPORTATION|COMMERCE|LABOR|THE INTERIOR|ADMINISTRATION|EDUCATION|TECHNOLOGY|INFORMATION TECHNOLOGY|REVENUE|CORRECTIONS|MOTOR VEHICLES)|FEDERAL STATE (BUDGETARY|UNITARY|AUTONOMOUS|INSTITUTION)|DOD NETWORK|CITY OF|COUNTY OF|COUNTY( GOVERNMENT)?$|STATE OF|COMMONWEALTH OF|MUNICIPALITY|MUNICIPAL|PREFECTURE|PARLIAMENT|NATIONAL AERONAUTICS AND SPACE|INTERNAL REVENUE SERVICE|ARMED FORCES|AIR FORCE|FIRE (AND|&) RESCUE|POLICE|AUTHORITY|SENATE?|CITY COUNCIL|COUNTY COUNCIL|COURTS?|JUDICIARY|CUSTOMS|NATIONAL ASSEMBLY)\b/i,
  },
  {
    type: 'DATACENTER',
    means: 'a hosting, cloud or CDN operator',
    // Hosting words also start or end brand names ("CloudKleyer", "FDCservers", "Serverio"), so some have no boundary on that side.
    re: /(\b(HOSTING|HOSTER|WEBHOST(ING)?|HOST|HOSTED|CLOUD\w*|DATA ?CENT(ER|RE)S?|RECHENZENTRUM|SERVER\w*|VPS|VDS|SEEDBOX|COLO(CATION)?|DEDICATED|BACKUP|DISASTER RECOVERY|COMPUTE|CDN|CONTENT DELIVERY|IDC|HETZNER|OVH|DIGITALOCEAN|LINODE|VULTR|LEASEWEB|CONTABO|CHOOPA|M247|DATACAMP)\b|\w(HOSTING|SERVERS|CLOUD)\b)/i,
  },
  {
    type: 'MOBILE',
    means: 'a mobile operator',
    re: /\b(MOBILE|MOBILITY|CELLULAR|CELLCO|LTE|5G|GSM|TELCEL|MOVIL|MÓVIL|MOBILFUNK|T-MOBILE|TELKOMSEL)\b/i,
  },
  {
    // Before the operator brands below: "Vodafone Kabel Deutschland" is a cable network.
    type: 'RESIDENTIAL',
    means: 'a fixed access network (cable, DSL, fibre or broadband)',
    re: /\b(BROADBAND|CABLE|KABEL|CABLEVISION|CATV|DSL|FIBRE|FIBER|FIBRA)\b/i,
  },
  {
    // Groups whose operating companies are mobile-first (their fixed networks, where large, are curated).
    type: 'MOBILE',
    means: 'a mobile-first operator group (Vodafone, MTN, Airtel, Zain, MegaFon, Three, Ooredoo, Tigo, Digicel, …)',
    re: /\b(VODAFONE|MTN|AIRTEL|ZAIN|MEGAFON|HI3G|HUTCHISON 3G|OOREDOO|TIGO|MILLICOM|DIGICEL|SAFARICOM|KYIVSTAR|LIFECELL|TURKCELL|MOBILINK|ROSHAN|JAZZ|CELCOM|MAXIS|TRUEMOVE|DTAC|MOBILY|BEELINE|VIMPELCOM)\b/i,
  },
  {
    type: 'RESIDENTIAL',
    means: 'an access ISP (telecom, ISP or network words)',
    re: /(\b(WIRELESS|WISP|TELECOMS?|TELEKOM\w*|TELECOMUNICA\w*|TELECOMMUNICATIONS?|TELEKOMMUNIKA\w*|COMUNICA(CAO|COES|CIONES)|ILETISIM|BROADBAND|CABLE|CABLEVISION|COMMUNICATIONS?|INTERNET|ISP|PROVEDOR|CONNECT\w*|CONEXAO|NET|WI-?FI|CATV|FIBRE|FIBER|FIBRA|DSL|TELEPHONE|TELEFONICA|TELCO|NETWORKS?|SIECI KOMPUTEROWE|COMCAST|CHARTER|VERIZON|AT&T|ORANGE|TELSTRA)\b|\w(TELECOM|NET)\b)/i,
  },
  {
    type: 'CORPORATE',
    means: 'a company outside the network business: its own network',
    re: /\b(PHARMA\w*|PHARMACY|FARMACIA|HOSPITALS?|HEALTH ?CARE|HEALTH|MEDICAL|CLINIC|CLINICA|LABORATORIES|DIAGNOSTICS|BIOTECH\w*|MOTORS?|AUTOMOTIVE|AIRLINES?|AIRWAYS|RAILWAYS?|JEWEL\w*|CHURCH|MISSION|HOTELS?|RESORTS?|ENGINEERING|MANUFACTURING|FOODS?|RETAIL|STORES|LOGISTICS|CHEMICALS?|ENERGY|ELECTRICITE|PETROLEUM|OIL|MINING|STEEL|CONSTRUCTION|PROPERTY|ILLUMINAZIONE|PRINTING|SOFTWARE|GAMES|ENTERTAINMENT|STUDIOS|INDUSTRIES|INDUSTRIAL|HOLDINGS|RESTAURANTS?|SUPERMARKETS?|SUPERMERCADOS?|UTILITIES|ELECTRIC|POWER|WATER|ENERGIA|REAL ESTATE|REALTY|PROPERTIES|LAW|LEGAL|ATTORNEYS|CONSULTING|PUBLISHING|NEWSPAPERS?|SHIPPING|TRANSPORT|FREIGHT|AEROSPACE|SEMICONDUCTORS?|ELECTRONICS|MANUFACTURERS?|CASINO|TRAVEL|AIRPORTS?)\b/i,
  },
];

export interface NetworkTypeVerdict {
  type: NetworkType;
  /** A curated ASN group, the registered name, or nothing (UNKNOWN); imported lists come later, at lookup time. */
  source: Exclude<NetworkTypeSource, 'list'>;
  /** In words: the curated group and where its knowledge comes from, or the keyword matched and what it means. */
  reason: string;
}

const NO_EVIDENCE = 'no curated entry for the ASN and no telling word in its registered name';

/** The type and where it came from (stored with each network, shown by `?explain=true`). */
export function explainNetworkType(asn: number, name: string): NetworkTypeVerdict {
  const group = BY_ASN.get(asn);
  if (group) return { type: group.type, source: 'asn', reason: `AS${asn} is in the curated ${group.name} group: ${group.source}` };
  for (const rule of BY_NAME) {
    const m = rule.re.exec(name);
    if (m) return { type: rule.type, source: 'name', reason: `the registered name (network.isp) has "${m[0]}": ${rule.means}` };
  }
  // Nothing known: no silent CORPORATE.
  return { type: 'UNKNOWN', source: 'none', reason: NO_EVIDENCE };
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
