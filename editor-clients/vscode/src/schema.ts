// Derives package.json's server settings from the server's pydantic JSON schema, and lists drift.
// Pure: used by the settings test and by `npm run sync-settings`, never by the running extension.

import { CLIENT_ONLY_KEYS, Contributed, SECTION, SettingSchema } from './settings';

/** A property of a pydantic `model_json_schema(by_alias=True)` (only the parts we map). */
export interface JsonSchemaProperty {
  type?: string;
  anyOf?: JsonSchemaProperty[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  title?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  items?: JsonSchemaProperty;
  $ref?: string;
}

export interface JsonSchema {
  properties: Record<string, JsonSchemaProperty>;
  $defs?: Record<string, JsonSchemaProperty>;
}

/** The keys of a setting that are machine-derived from the schema (descriptions are not). */
const DERIVED = ['type', 'default', 'enum', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'items'] as const;

/** The VS Code setting for one schema property: type (with "null" when optional), enum, bounds. */
export function settingFor(prop: JsonSchemaProperty, schema: JsonSchema): SettingSchema {
  const resolved = resolve(prop, schema);
  const variants = (resolved.anyOf ?? [resolved]).map((variant) => resolve(variant, schema));
  const types: string[] = [];
  const setting: SettingSchema = {};
  for (const variant of variants) {
    const type = variant.type ?? (variant.const !== undefined ? typeof variant.const : undefined);
    if (type && !types.includes(type)) {
      types.push(type);
    }
    const values = variant.enum ?? (variant.const !== undefined ? [variant.const] : undefined);
    if (values) {
      setting.enum = [...(setting.enum ?? []), ...values];
    }
    for (const bound of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const) {
      if (variant[bound] !== undefined) {
        setting[bound] = variant[bound];
      }
    }
    if (variant.items) {
      setting.items = settingFor(variant.items, schema);
    }
  }
  if (setting.enum && types.includes('null') && !setting.enum.includes(null)) {
    setting.enum.push(null);
  }
  setting.type = types.length === 1 ? types[0] : types;
  if ('default' in prop) {
    setting.default = prop.default;
  }
  return setting;
}

function resolve(prop: JsonSchemaProperty, schema: JsonSchema): JsonSchemaProperty {
  if (!prop.$ref) {
    return prop;
  }
  const name = prop.$ref.split('/').pop() ?? '';
  const target = schema.$defs?.[name];
  if (!target) {
    throw new Error(`schema reference ${prop.$ref} is not in $defs`);
  }
  return { ...target, ...prop, $ref: undefined };
}

/** Every server setting as package.json should contribute it (keys `prewrite.<camelCase>`). */
export function expectedSettings(schema: JsonSchema): Contributed {
  const expected: Contributed = {};
  for (const [key, prop] of Object.entries(schema.properties)) {
    const setting = settingFor(prop, schema);
    if (prop.description) {
      setting.description = prop.description;
    }
    expected[`${SECTION}.${key}`] = setting;
  }
  return expected;
}

/** Differences between package.json's server settings and the schema; empty when in sync. */
export function drift(contributed: Contributed, schema: JsonSchema): string[] {
  const expected = expectedSettings(schema);
  const clientOnly = new Set(CLIENT_ONLY_KEYS.map((key) => `${SECTION}.${key}`));
  const problems: string[] = [];
  for (const name of Object.keys(expected)) {
    const actual = contributed[name];
    if (!actual) {
      problems.push(`${name}: in the server schema but not contributed by package.json`);
      continue;
    }
    for (const part of DERIVED) {
      if (JSON.stringify(actual[part]) !== JSON.stringify(expected[name][part])) {
        problems.push(
          `${name}.${part}: package.json has ${JSON.stringify(actual[part])}, ` +
            `the server schema ${JSON.stringify(expected[name][part])}`,
        );
      }
    }
    if (expected[name].description && actual.description !== expected[name].description) {
      problems.push(`${name}.description: package.json has ${JSON.stringify(actual.description)}, the server schema ${JSON.stringify(expected[name].description)}`);
    } else if (!actual.description && !actual.markdownDescription) {
      problems.push(`${name}: no description`);
    }
  }
  for (const name of Object.keys(contributed)) {
    if (!(name in expected) && !clientOnly.has(name)) {
      problems.push(`${name}: contributed by package.json but not a server setting nor a client one`);
    }
  }
  return problems;
}

/**
 * package.json's settings brought in sync with the schema: derived parts and descriptions from
 * the schema (a description kept where the schema has none), in the schema's order after the
 * client-only settings; stale server settings are dropped.
 */
export function synced(contributed: Contributed, schema: JsonSchema): Contributed {
  const result: Contributed = {};
  for (const [name, setting] of Object.entries(contributed)) {
    if (CLIENT_ONLY_KEYS.some((key) => name === `${SECTION}.${key}`)) {
      result[name] = setting;
    }
  }
  let order = Object.keys(result).length;
  for (const [name, setting] of Object.entries(expectedSettings(schema))) {
    const previous = contributed[name] ?? {};
    result[name] = {
      ...setting,
      description: setting.description ?? previous.description,
      order: order++,
    };
  }
  return result;
}
