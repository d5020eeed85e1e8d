/**
 * The Prisma schema's DMMF, computed offline by the schema Wasm module that ships inside the
 * `prisma` package (the same `get_dmmf` the CLI calls before generating). The module has four
 * imports; this is the minimal wasm-bindgen glue for them and for passing strings in and out.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface DmmfField {
  name: string;
  dbName: string | null;
  kind: 'scalar' | 'object' | 'enum' | 'unsupported';
  type: string;
  isList: boolean;
  isRequired: boolean;
  isUnique: boolean;
  isId: boolean;
  isUpdatedAt?: boolean;
  hasDefaultValue: boolean;
  default?: unknown;
  nativeType?: [string, string[]] | null;
  relationName?: string | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
}

export interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
  primaryKey: { name: string | null; fields: string[] } | null;
  uniqueFields: string[][];
  uniqueIndexes: Array<{ name: string | null; fields: string[] }>;
}

interface DmmfIndex {
  model: string;
  type: 'id' | 'normal' | 'unique' | 'fulltext';
  isDefinedOnField: boolean;
  dbName?: string | null;
  name?: string | null;
  fields: Array<{ name: string; sortOrder?: string }>;
}

export interface Dmmf {
  datamodel: {
    models: DmmfModel[];
    enums: Array<{ name: string; dbName: string | null; values: Array<{ name: string; dbName: string | null }> }>;
    indexes?: DmmfIndex[];
  };
}

interface SchemaWasm {
  memory: WebAssembly.Memory;
  get_dmmf(ptr: number, len: number): [number, number, number, number];
  __wbindgen_malloc(size: number, align: number): number;
  __wbindgen_free(ptr: number, len: number, align: number): void;
  __wbindgen_externrefs: WebAssembly.Table;
  __externref_table_dealloc(idx: number): void;
  __wbindgen_start(): void;
}

let instance: SchemaWasm | undefined;

function load(): SchemaWasm {
  if (instance) return instance;
  const require = createRequire(import.meta.url);
  const wasmPath = path.join(
    path.dirname(require.resolve('prisma/package.json')),
    'build',
    'prisma_schema_build_bg.wasm',
  );
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let exports: SchemaWasm;
  const str = (ptr: number, len: number) => decoder.decode(new Uint8Array(exports.memory.buffer, ptr >>> 0, len));
  const imports: Record<string, (...args: number[]) => unknown> = {
    __wbindgen_init_externref_table() {
      const table = exports.__wbindgen_externrefs;
      const offset = table.grow(4);
      table.set(0, undefined);
      table.set(offset + 0, undefined);
      table.set(offset + 1, null);
      table.set(offset + 2, true);
      table.set(offset + 3, false);
    },
  };
  const module = new WebAssembly.Module(readFileSync(wasmPath));
  // The hashed import names change between releases; bind them by their stable prefix.
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.name.startsWith('__wbg_Error_')) imports[imp.name] = (p, l) => new Error(str(p!, l!));
    else if (imp.name.startsWith('__wbg___wbindgen_throw_')) {
      imports[imp.name] = (p, l) => {
        throw new Error(str(p!, l!));
      };
    } else if (imp.name.startsWith('__wbg_set_message_')) imports[imp.name] = () => undefined;
    else if (!imports[imp.name]) throw new Error(`Unexpected import ${imp.module}.${imp.name} of ${wasmPath}`);
  }
  exports = new WebAssembly.Instance(module, { __wbindgen_placeholder__: imports }).exports as unknown as SchemaWasm;
  exports.__wbindgen_start();
  instance = exports;
  return exports;
}

/** DMMF of a Prisma schema text (throws with Prisma's validation errors for an invalid schema). */
export function getDmmf(schema: string): Dmmf {
  const wasm = load();
  const input = new TextEncoder().encode(JSON.stringify({ prismaSchema: schema, noColor: true }));
  const ptr = wasm.__wbindgen_malloc(input.length, 1) >>> 0;
  new Uint8Array(wasm.memory.buffer, ptr, input.length).set(input);
  const [outPtr, outLen, errIdx, isErr] = wasm.get_dmmf(ptr, input.length);
  if (isErr) {
    const err = wasm.__wbindgen_externrefs.get(errIdx) as Error;
    wasm.__externref_table_dealloc(errIdx);
    throw new Error(`get_dmmf failed: ${err?.message ?? String(err)}`);
  }
  try {
    const text = new TextDecoder().decode(new Uint8Array(wasm.memory.buffer, outPtr >>> 0, outLen));
    return JSON.parse(text) as Dmmf;
  } finally {
    wasm.__wbindgen_free(outPtr, outLen, 1);
  }
}
