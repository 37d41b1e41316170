import { anchor, esc, markdown } from './html.ts';

/** The parts of JSON Schema (2020-12, as OpenAPI 3.1 embeds it) the reference page shows. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  description?: string;
  title?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  deprecated?: boolean;
}

const REF_PREFIX = '#/components/schemas/';
const MAX_DEPTH = 10;

export const schemaAnchor = (name: string): string => anchor('schema', name);

const refLink = (ref: string): string => {
  const name = ref.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : ref;
  return `<a class="ref" href="#${schemaAnchor(name)}">${esc(name)}</a>`;
};

const literal = (v: unknown): string => `<code>${esc(JSON.stringify(v))}</code>`;

/** Variants that are each a single literal (TypeBox writes a union of literals as anyOf of enums). */
function literalsOf(variants: JsonSchema[]): unknown[] | undefined {
  const values: unknown[] = [];
  for (const v of variants) {
    if (v.const !== undefined) values.push(v.const);
    else if (v.enum) values.push(...v.enum);
    else return undefined;
  }
  return values;
}

/** A short type label: `string`, `integer | null`, `array of IpResult`, `"true" | "false"`. */
export function typeLabel(s: JsonSchema): string {
  if (s.$ref) return refLink(s.$ref);
  if (s.const !== undefined) return literal(s.const);
  if (s.enum) return s.enum.map(literal).join(' | ');
  const union = s.anyOf ?? s.oneOf;
  if (union) {
    const literals = literalsOf(union);
    return literals ? literals.map(literal).join(' | ') : union.map(typeLabel).join(' | ');
  }
  if (s.allOf) return s.allOf.map(typeLabel).join(' & ');
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  const labels = types.map((t) => {
    if (t === 'array') return s.items ? `array of ${typeLabel(s.items)}` : 'array';
    if (t === 'object' && !s.properties && typeof s.additionalProperties === 'object') return `map of ${typeLabel(s.additionalProperties)}`;
    return esc(t);
  });
  const label = labels.join(' | ') || 'any';
  return s.format ? `${label} <span class="fmt">(${esc(s.format)})</span>` : label;
}

/** Bounds, pattern, default and examples, in words a reader scans. */
function constraints(s: JsonSchema): string {
  const parts: string[] = [];
  const range = (lo: number | undefined, hi: number | undefined, unit: string) => {
    if (lo !== undefined && hi !== undefined) parts.push(`${unit}${lo}–${hi}`);
    else if (lo !== undefined) parts.push(`${unit}≥ ${lo}`);
    else if (hi !== undefined) parts.push(`${unit}≤ ${hi}`);
  };
  range(s.minimum, s.maximum, '');
  range(s.minLength, s.maxLength, 'length ');
  range(s.minItems, s.maxItems, 'items ');
  if (s.pattern) parts.push(`pattern <code>${esc(s.pattern)}</code>`);
  if (s.default !== undefined) parts.push(`default ${literal(s.default)}`);
  const examples = s.examples ?? (s.example !== undefined ? [s.example] : []);
  if (examples.length) parts.push(`e.g. ${examples.map(literal).join(', ')}`);
  if (s.deprecated) parts.push('<strong>deprecated</strong>');
  return parts.length ? `<span class="cons">${parts.join(' · ')}</span>` : '';
}

/** The object schema whose members are listed under a field: itself, its array items, or a map's values. */
function membersOf(s: JsonSchema): JsonSchema | undefined {
  if (s.properties) return s;
  if (s.items) return membersOf(s.items);
  if (typeof s.additionalProperties === 'object') return membersOf(s.additionalProperties);
  return undefined;
}

function objectVariants(s: JsonSchema): JsonSchema[] {
  return (s.anyOf ?? s.oneOf ?? []).filter((v) => membersOf(v));
}

function fields(s: JsonSchema, depth: number): string {
  const required = new Set(s.required ?? []);
  const rows = Object.entries(s.properties ?? {}).map(([name, prop]) => {
    const req = required.has(name) ? '<span class="req">required</span>' : '';
    const desc = prop.description ? `<div class="desc">${markdown(prop.description)}</div>` : '';
    return `<li><div class="field"><code class="name">${esc(name)}</code> <span class="type">${typeLabel(prop)}</span> ${req} ${constraints(prop)}</div>${desc}${nested(prop, depth + 1)}</li>`;
  });
  if (typeof s.additionalProperties === 'object' && s.properties) {
    rows.push(
      `<li><div class="field"><code class="name">*</code> <span class="type">${typeLabel(s.additionalProperties)}</span></div></li>`,
    );
  }
  return `<ul class="fields">${rows.join('')}</ul>`;
}

function nested(s: JsonSchema, depth: number): string {
  if (depth > MAX_DEPTH || s.$ref) return '';
  const members = membersOf(s);
  if (members) return fields(members, depth);
  const variants = objectVariants(s);
  if (variants.length) {
    return variants.map((v, i) => `<div class="variant">variant ${i + 1}</div>${nested(v, depth)}`).join('');
  }
  return '';
}

/** A schema as a heading line (its type) and the nested list of its members. */
export function schemaHtml(s: JsonSchema): string {
  const desc = s.description ? `<div class="desc">${markdown(s.description)}</div>` : '';
  return `<div class="schema"><div class="field"><span class="type">${typeLabel(s)}</span> ${constraints(s)}</div>${s.$ref ? '' : desc}${nested(s, 0)}</div>`;
}
