import { RequestMethod } from '@nestjs/common';
import { GUARDS_METADATA, INTERCEPTORS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/** One route a Nest controller declares, read from its decorators' metadata (no application is built). */
export interface NestRoute {
  method: string;
  /** In the OpenAPI form (`/admin/tasks/{id}`), as the route table writes paths. */
  path: string;
  /** The top-level directory of src/ the controller is in. */
  module: string;
  controller: string;
  handler: string;
  /** What the route runs before its handler: guard and interceptor class names. */
  guards: string[];
  interceptors: string[];
  /** The handler's own metadata (AdminAuthGuard's OWN_VIEW, ChatAdmission's READS_BODY...). */
  metadata: Record<string | symbol, unknown>;
  /** The controller is left out of the OpenAPI document (@ApiExcludeController). */
  excluded: boolean;
}

const SRC = join(import.meta.dirname, '../../src');

function controllerFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? controllerFiles(join(dir, entry.name)) : entry.name.endsWith('.controller.ts') ? [join(dir, entry.name)] : [],
  );
}

/** `:id` → `{id}`, `*path` → `{path}`, joined with one slash each: the form of docs/openapi.json. */
function openApiPath(...parts: string[]): string {
  const joined = parts
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter((part) => part !== '')
    .join('/');
  return `/${joined}`.replace(/:(\w+)/g, '{$1}').replace(/\*(\w+)/g, '{$1}');
}

const names = (items: unknown[] | undefined) => (items ?? []).map((item) => (item as { name: string }).name);

/** Every route of every `*.controller.ts` under src/. */
export async function nestRoutes(): Promise<NestRoute[]> {
  const routes: NestRoute[] = [];
  for (const file of controllerFiles(SRC)) {
    const exports = (await import(file)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(exports)) {
      if (typeof value !== 'function' || Reflect.getMetadata(PATH_METADATA, value) === undefined) continue;
      const controller = value as new (...args: never[]) => object;
      const prefixes = [Reflect.getMetadata(PATH_METADATA, controller) as string | string[]].flat();
      const excluded = Reflect.getMetadata('swagger/apiExcludeController', controller) !== undefined;
      for (const key of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[key];
        if (typeof handler !== 'function' || Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
        const metadata = Object.fromEntries(Reflect.getMetadataKeys(handler).map((k) => [k, Reflect.getMetadata(k, handler)]));
        for (const prefix of prefixes)
          for (const path of [Reflect.getMetadata(PATH_METADATA, handler) as string | string[]].flat())
            routes.push({
              method,
              path: openApiPath(prefix, path),
              module: relative(SRC, file).split('/')[0],
              controller: name,
              handler: key,
              guards: [...names(Reflect.getMetadata(GUARDS_METADATA, controller)), ...names(Reflect.getMetadata(GUARDS_METADATA, handler))],
              interceptors: [...names(Reflect.getMetadata(INTERCEPTORS_METADATA, controller)), ...names(Reflect.getMetadata(INTERCEPTORS_METADATA, handler))],
              metadata,
              excluded,
            });
      }
    }
  }
  return routes;
}
