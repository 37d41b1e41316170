/** A TLS ClientHello as the honeypot_https feed records it (its `details`), JA4 included. */
export interface CodeName {
  code: number;
  name: string;
}

export interface ExtensionEntry {
  code: number;
  name: string;
  /** Length of the extension body in bytes (without the 4-byte type/length header). */
  length: number;
}

/**
 * Versions are names such as "TLS 1.2" ("0x7f1c" for unregistered codes,
 * "GREASE" for GREASE) so analysts can read them without a table.
 */
export interface ClientHelloDetails {
  /** Version from the record header; null when a bare handshake message was given. */
  record_version: string | null;
  /** legacy_version (client_version) of the ClientHello itself. */
  handshake_version: string;
  client_random: string;
  session_id: string;
  session_id_length: number;
  /** First host_name entry of server_name; null when absent or empty. */
  sni: string | null;
  cipher_suites: CodeName[];
  supported_groups: CodeName[];
  signature_algorithms: CodeName[];
  /** Every extension in wire order, GREASE included. */
  extensions: ExtensionEntry[];
  compression_methods: number[];
  supported_versions: string[];
  ec_point_formats: string[];
  key_share_groups: string[];
  psk_key_exchange_modes: string[];
  /**
   * ALPN protocol ids, one character per byte (latin1), so non-ASCII ids
   * survive byte-exact for JA4's first/last-character rule.
   */
  alpn: string[];
  extended_master_secret: boolean;
  renegotiation_info: boolean;
  status_request: boolean;
  signed_certificate_timestamps: boolean;
  has_grease: boolean;
  encrypt_then_mac: boolean;
  post_handshake_auth: boolean;
  delegated_credentials: boolean;
  /** Either ALPS code point: 0x4469 (old) or 0x44cd (current Chrome). */
  application_settings: boolean;
  ja4: string;
}
