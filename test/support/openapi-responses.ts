import { Ajv, addFormats } from '@modelcontextprotocol/server/validators/ajv';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The parts of an OpenAPI 3.0 document these checks read. */
export type Schema = Record<string, unknown>;
export interface Operation {
  responses: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

export const committedDocument = (): OpenApiDocument => JSON.parse(readFileSync(join(import.meta.dirname, '../../docs/openapi.json'), 'utf8')) as OpenApiDocument;

const COMPONENTS = '#/components/schemas/';

/**
 * An OpenAPI 3.0 schema as JSON Schema, stricter than the document: `nullable` becomes "or null", and
 * an object with `properties` admits no other field (`additionalProperties: false` unless the document
 * says otherwise), so that a field the API sends but does not document fails as a missing one does.
 */
function strict(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== 'object') return schema;
  const { nullable, ...rest } = schema as Schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(rest)) {
    if (key === '$ref' && typeof value === 'string') out.$ref = value.replace(COMPONENTS, '#/definitions/');
    else if (key === 'properties') out.properties = Object.fromEntries(Object.entries(value as Schema).map(([name, property]) => [name, strict(property)]));
    else out[key] = strict(value);
  }
  if (out.properties !== undefined && out.additionalProperties === undefined) out.additionalProperties = false;
  return nullable === true ? { anyOf: [{ type: 'null' }, out] } : out;
}

/** Checks response bodies against the document's schema of their route and status. */
export class ResponseSchemas {
  private readonly ajv = new Ajv({ allErrors: true, strict: false });

  constructor(private readonly document: OpenApiDocument) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'components', definitions: strict(document.components.schemas) as Schema });
  }

  /** The JSON schema of `method path` answering `status`, or undefined when the document gives none. */
  schemaOf(method: string, path: string, status: number): Schema | undefined {
    return this.document.paths[path]?.[method.toLowerCase()]?.responses[String(status)]?.content?.['application/json']?.schema;
  }

  /** What is wrong with `body` as the answer of `method path` with `status` (one line per problem); [] when it matches. */
  problems(method: string, path: string, status: number, body: unknown): string[] {
    const schema = this.schemaOf(method, path, status);
    if (!schema) return [`${method} ${path} ${status}: no application/json schema in the document`];
    const validate = this.ajv.getSchema(`components${refOf(schema)}`);
    if (!validate) return [`${method} ${path} ${status}: ${String(schema.$ref)} is not in the document's components`];
    if (validate(body)) return [];
    return (validate.errors ?? []).map((error) => `${method} ${path} ${status}: ${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
  }
}

/** `#/definitions/X` of a response schema that names a component, which is how Nest writes every DTO response. */
function refOf(schema: Schema): string {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith(COMPONENTS)) throw new Error(`a response schema that is not a component: ${JSON.stringify(schema)}`);
  return `#/definitions/${ref.slice(COMPONENTS.length)}`;
}
