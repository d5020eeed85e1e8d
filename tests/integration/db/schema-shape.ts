/**
 * A comparable shape of a relational schema, built two ways: from the Prisma schema's DMMF (what
 * Prisma expects on PostgreSQL) and from a live database's catalog (what the SQL migrations
 * produced). `diffShapes` lists every disagreement in words.
 */
import type { SqlSession } from '@/server/migrate';
import type { Dmmf, DmmfField, DmmfModel } from './dmmf';

interface ColumnShape {
  type: string;
  nullable: boolean;
  default: string | null;
}

interface IndexShape {
  unique: boolean;
  columns: string[];
}

interface ForeignKeyShape {
  columns: string[];
  table: string;
  refColumns: string[];
  onDelete: string;
  onUpdate: string;
}

interface TableShape {
  columns: Record<string, ColumnShape>;
  primaryKey: { name: string; columns: string[] } | null;
  /** Unique and plain indexes by name (primary keys excluded). */
  indexes: Record<string, IndexShape>;
  foreignKeys: Record<string, ForeignKeyShape>;
}

export interface SchemaShape {
  enums: Record<string, string[]>;
  tables: Record<string, TableShape>;
}

// ---------------------------------------------------------------------------------------------
// From the DMMF: Prisma's PostgreSQL mapping and default constraint names.
// ---------------------------------------------------------------------------------------------

const SCALAR_TYPES: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Float: 'double precision',
  Decimal: 'numeric(65,30)',
  Boolean: 'boolean',
  DateTime: 'timestamp(3) without time zone',
  Json: 'jsonb',
  Bytes: 'bytea',
};

const NATIVE_TYPES: Record<string, (args: string[]) => string> = {
  Text: () => 'text',
  VarChar: (a) => (a.length ? `character varying(${a[0]})` : 'character varying'),
  Char: (a) => `character(${a[0] ?? 1})`,
  Uuid: () => 'uuid',
  Integer: () => 'integer',
  SmallInt: () => 'smallint',
  BigInt: () => 'bigint',
  DoublePrecision: () => 'double precision',
  Real: () => 'real',
  Decimal: (a) => (a.length ? `numeric(${a.join(',')})` : 'numeric'),
  Boolean: () => 'boolean',
  Timestamp: (a) => `timestamp(${a[0] ?? 3}) without time zone`,
  Timestamptz: (a) => `timestamp(${a[0] ?? 3}) with time zone`,
  Date: () => 'date',
  Json: () => 'json',
  JsonB: () => 'jsonb',
  ByteA: () => 'bytea',
};

const REFERENTIAL_ACTIONS: Record<string, string> = {
  Cascade: 'CASCADE',
  Restrict: 'RESTRICT',
  NoAction: 'NO ACTION',
  SetNull: 'SET NULL',
  SetDefault: 'SET DEFAULT',
};

const quoteLiteral = (v: string) => `'${v.replace(/'/g, "''")}'`;

function columnType(f: DmmfField, enumDbNames: Map<string, string>): string {
  let t: string;
  if (f.kind === 'enum')
    t = quoteIdent(enumDbNames.get(f.type) ?? f.type); // format_type() quotes mixed case
  else if (f.nativeType) {
    const [name, args] = f.nativeType;
    t = NATIVE_TYPES[name]?.(args) ?? `${name}(${args.join(',')})`;
  } else t = SCALAR_TYPES[f.type] ?? `unknown Prisma type ${f.type}`;
  return f.isList ? `${t}[]` : t;
}

/** The default PostgreSQL shows in its catalog for a Prisma `@default(...)`, or null for none. */
function columnDefault(f: DmmfField, type: string): string | null {
  if (!f.hasDefaultValue || f.default === undefined) return null;
  const d = f.default;
  if (d !== null && typeof d === 'object' && !Array.isArray(d) && 'name' in d) {
    const fn = d as { name: string; args?: unknown[] };
    if (fn.name === 'now') return 'CURRENT_TIMESTAMP';
    if (fn.name === 'autoincrement') return 'autoincrement()';
    if (fn.name === 'dbgenerated') return String(fn.args?.[0] ?? '');
    // uuid(), cuid(), nanoid(), ulid() are filled in by the client: no database default.
    if (['uuid', 'cuid', 'nanoid', 'ulid'].includes(fn.name)) return null;
    return `${fn.name}(${(fn.args ?? []).join(', ')})`;
  }
  // A list default (`@default([])`, Prisma's `DEFAULT ARRAY[]::TEXT[]`) as the catalog prints it:
  // `ARRAY[]::text[]`, or `ARRAY['a'::text, 'b'::text]` with elements.
  if (f.isList && Array.isArray(d)) {
    const element = type.replace(/\[\]$/, '');
    if (d.length === 0) return `ARRAY[]::${type}`;
    return `ARRAY[${d.map((v) => (typeof v === 'string' ? `${quoteLiteral(v)}::${element}` : String(v))).join(', ')}]`;
  }
  if (f.kind === 'enum') return `${quoteLiteral(String(d))}::${type}`;
  switch (f.type) {
    case 'String':
      return `${quoteLiteral(String(d))}::${type}`;
    case 'Boolean':
      return String(d);
    case 'Int':
    case 'BigInt':
    case 'Float':
    case 'Decimal':
      return numericDefault(String(d));
    case 'Json':
      return `${quoteLiteral(typeof d === 'string' ? d : JSON.stringify(d))}::jsonb`;
    default:
      return JSON.stringify(d);
  }
}

/**
 * A numeric literal as the catalog shows it: PostgreSQL keeps the literal's own type (integer,
 * bigint beyond 32 bits, numeric with a fraction) and shows negative and bigint ones as a cast
 * string, e.g. `DEFAULT -1` -> `'-1'::integer`, `DEFAULT -1.5` -> `'-1.5'::numeric`.
 */
function numericDefault(v: string): string {
  if (/^-?\d+$/.test(v)) {
    const n = BigInt(v);
    if (n >= -(2n ** 31n) && n < 2n ** 31n) return n < 0n ? `${quoteLiteral(v)}::integer` : v;
    if (n >= -(2n ** 63n) && n < 2n ** 63n) return `${quoteLiteral(v)}::bigint`;
    return `${quoteLiteral(v)}::numeric`;
  }
  return v.startsWith('-') ? `${quoteLiteral(v)}::numeric` : v;
}

function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/** Prisma's default constraint names: <table>_<columns>_{pkey,key,idx,fkey}, at most 63 bytes. */
function constraintName(table: string, columns: string[], suffix: 'pkey' | 'key' | 'idx' | 'fkey'): string {
  const base = suffix === 'pkey' ? table : `${table}_${columns.join('_')}`;
  const max = 63 - suffix.length - 1;
  return `${base.length > max ? base.slice(0, max) : base}_${suffix}`;
}

export function shapeFromDmmf(dmmf: Dmmf): SchemaShape {
  const enums: Record<string, string[]> = {};
  const enumDbNames = new Map<string, string>();
  for (const e of dmmf.datamodel.enums) {
    const name = e.dbName ?? e.name;
    enumDbNames.set(e.name, name);
    enums[name] = e.values.map((v) => v.dbName ?? v.name);
  }
  const models = new Map<string, DmmfModel>(dmmf.datamodel.models.map((m) => [m.name, m]));
  const tableOf = (m: DmmfModel) => m.dbName ?? m.name;
  const colOf = (m: DmmfModel, field: string) => {
    const f = m.fields.find((x) => x.name === field);
    return f?.dbName ?? field;
  };

  const tables: Record<string, TableShape> = {};
  for (const m of dmmf.datamodel.models) {
    const table = tableOf(m);
    const t: TableShape = { columns: {}, primaryKey: null, indexes: {}, foreignKeys: {} };
    for (const f of m.fields) {
      if (f.kind !== 'scalar' && f.kind !== 'enum') continue;
      const type = columnType(f, enumDbNames);
      t.columns[f.dbName ?? f.name] = { type, nullable: !f.isRequired, default: columnDefault(f, type) };
    }

    const idFields = m.primaryKey?.fields ?? m.fields.filter((f) => f.isId).map((f) => f.name);
    if (idFields.length) {
      const cols = idFields.map((f) => colOf(m, f));
      t.primaryKey = { name: m.primaryKey?.name ?? constraintName(table, cols, 'pkey'), columns: cols };
    }

    const indexes = (dmmf.datamodel.indexes ?? []).filter((i) => i.model === m.name);
    if (dmmf.datamodel.indexes) {
      for (const i of indexes) {
        if (i.type !== 'unique' && i.type !== 'normal') continue;
        const cols = i.fields.map((f) => colOf(m, f.name));
        const name = i.dbName ?? constraintName(table, cols, i.type === 'unique' ? 'key' : 'idx');
        t.indexes[name] = { unique: i.type === 'unique', columns: cols };
      }
    } else {
      // Older DMMF without `indexes`: unique constraints only.
      for (const f of m.fields.filter((x) => x.isUnique)) {
        const cols = [f.dbName ?? f.name];
        t.indexes[constraintName(table, cols, 'key')] = { unique: true, columns: cols };
      }
      for (const u of m.uniqueIndexes) {
        const cols = u.fields.map((f) => colOf(m, f));
        t.indexes[constraintName(table, cols, 'key')] = { unique: true, columns: cols };
      }
    }

    for (const f of m.fields) {
      if (f.kind !== 'object' || !f.relationFromFields?.length) continue;
      const target = models.get(f.type);
      if (!target) continue;
      const cols = f.relationFromFields.map((x) => colOf(m, x));
      const optional = f.relationFromFields.some((x) => !m.fields.find((y) => y.name === x)?.isRequired);
      t.foreignKeys[constraintName(table, cols, 'fkey')] = {
        columns: cols,
        table: tableOf(target),
        refColumns: (f.relationToFields ?? []).map((x) => colOf(target, x)),
        // Prisma's defaults: Restrict for required relations, SetNull for optional ones; Cascade on update.
        onDelete:
          REFERENTIAL_ACTIONS[f.relationOnDelete ?? (optional ? 'SetNull' : 'Restrict')] ?? String(f.relationOnDelete),
        onUpdate: REFERENTIAL_ACTIONS[f.relationOnUpdate ?? 'Cascade'] ?? String(f.relationOnUpdate),
      };
    }
    tables[table] = t;
  }
  return { enums, tables };
}

// ---------------------------------------------------------------------------------------------
// From the database catalog.
// ---------------------------------------------------------------------------------------------

const FK_ACTIONS: Record<string, string> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
};

/** Tables the applier owns, not part of the data model. */
const BOOKKEEPING_TABLES = new Set(['_prisma_migrations']);

/**
 * Reads the current schema (first schema on the search path). Partial and expression indexes are
 * returned under `partialIndexes` so the caller decides which are allowed.
 */
export async function shapeFromDatabase(
  s: SqlSession,
): Promise<SchemaShape & { partialIndexes: Record<string, { table: string; definition: string }> }> {
  const shape: SchemaShape & { partialIndexes: Record<string, { table: string; definition: string }> } = {
    enums: {},
    tables: {},
    partialIndexes: {},
  };

  const { rows: enumRows } = await s.query<{ name: string; value: string }>(
    `SELECT t.typname AS name, e.enumlabel AS value
       FROM pg_type t
       JOIN pg_namespace n ON n.oid = t.typnamespace
       JOIN pg_enum e ON e.enumtypid = t.oid
      WHERE n.nspname = current_schema()
      ORDER BY t.typname, e.enumsortorder`,
  );
  for (const r of enumRows) (shape.enums[r.name] ??= []).push(r.value);

  const { rows: tableRows } = await s.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  for (const r of tableRows) {
    if (BOOKKEEPING_TABLES.has(r.name)) continue;
    shape.tables[r.name] = { columns: {}, primaryKey: null, indexes: {}, foreignKeys: {} };
  }

  const { rows: columnRows } = await s.query<{
    table: string;
    column: string;
    type: string;
    nullable: boolean;
    default: string | null;
  }>(
    `SELECT c.relname AS "table", a.attname AS "column",
            format_type(a.atttypid, a.atttypmod) AS type,
            NOT a.attnotnull AS nullable,
            pg_get_expr(d.adbin, d.adrelid) AS "default"
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname, a.attnum`,
  );
  for (const r of columnRows) {
    const t = shape.tables[r.table];
    if (!t) continue;
    let dflt = r.default;
    if (dflt && /^nextval\(/.test(dflt)) dflt = 'autoincrement()';
    t.columns[r.column] = { type: r.type, nullable: r.nullable, default: dflt };
  }

  const { rows: indexRows } = await s.query<{
    table: string;
    name: string;
    is_unique: boolean;
    is_primary: boolean;
    predicate: string | null;
    has_expressions: boolean;
    columns: string;
    definition: string;
  }>(
    `SELECT t.relname AS "table", i.relname AS name, ix.indisunique AS is_unique, ix.indisprimary AS is_primary,
            pg_get_expr(ix.indpred, ix.indrelid) AS predicate,
            ix.indexprs IS NOT NULL AS has_expressions,
            (SELECT string_agg(a.attname, ',' ORDER BY k.ord)
               FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
               JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum) AS columns,
            pg_get_indexdef(ix.indexrelid) AS definition
       FROM pg_index ix
       JOIN pg_class i ON i.oid = ix.indexrelid
       JOIN pg_class t ON t.oid = ix.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = current_schema()
      ORDER BY t.relname, i.relname`,
  );
  for (const r of indexRows) {
    const t = shape.tables[r.table];
    if (!t) continue;
    const columns = (r.columns ?? '').split(',').filter(Boolean);
    if (r.predicate !== null || r.has_expressions) {
      shape.partialIndexes[r.name] = { table: r.table, definition: r.definition };
    } else if (r.is_primary) {
      t.primaryKey = { name: r.name, columns };
    } else {
      t.indexes[r.name] = { unique: r.is_unique, columns };
    }
  }

  const { rows: fkRows } = await s.query<{
    table: string;
    name: string;
    columns: string;
    ref_table: string;
    ref_columns: string;
    on_delete: string;
    on_update: string;
  }>(
    `SELECT t.relname AS "table", con.conname AS name,
            (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
               JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum) AS columns,
            rt.relname AS ref_table,
            (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
               JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum) AS ref_columns,
            con.confdeltype::text AS on_delete, con.confupdtype::text AS on_update
       FROM pg_constraint con
       JOIN pg_class t ON t.oid = con.conrelid
       JOIN pg_class rt ON rt.oid = con.confrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE con.contype = 'f' AND n.nspname = current_schema()
      ORDER BY t.relname, con.conname`,
  );
  for (const r of fkRows) {
    const t = shape.tables[r.table];
    if (!t) continue;
    t.foreignKeys[r.name] = {
      columns: r.columns.split(','),
      table: r.ref_table,
      refColumns: r.ref_columns.split(','),
      onDelete: FK_ACTIONS[r.on_delete] ?? r.on_delete,
      onUpdate: FK_ACTIONS[r.on_update] ?? r.on_update,
    };
  }
  return shape;
}

// ---------------------------------------------------------------------------------------------
// Comparison.
// ---------------------------------------------------------------------------------------------

/** Differences between what the Prisma schema expects and what the database has, in words. */
export function diffShapes(expected: SchemaShape, actual: SchemaShape): string[] {
  const out: string[] = [];
  const keys = (a: object, b: object) => [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  const list = (v: string[]) => `(${v.join(', ')})`;

  for (const name of keys(expected.enums, actual.enums)) {
    const e = expected.enums[name];
    const a = actual.enums[name];
    if (!a) out.push(`enum ${name}: in the Prisma schema, missing in the database`);
    else if (!e) out.push(`enum ${name}: in the database, not in the Prisma schema`);
    else if (e.join() !== a.join())
      out.push(`enum ${name}: values ${list(e)} in the Prisma schema, ${list(a)} in the database`);
  }

  for (const tableName of keys(expected.tables, actual.tables)) {
    const e = expected.tables[tableName];
    const a = actual.tables[tableName];
    if (!a) {
      out.push(`table ${tableName}: in the Prisma schema, missing in the database`);
      continue;
    }
    if (!e) {
      out.push(`table ${tableName}: in the database, not in the Prisma schema`);
      continue;
    }
    for (const col of keys(e.columns, a.columns)) {
      const ec = e.columns[col];
      const ac = a.columns[col];
      const where = `column ${tableName}.${col}`;
      if (!ac) out.push(`${where}: in the Prisma schema, missing in the database`);
      else if (!ec) out.push(`${where}: in the database, not in the Prisma schema`);
      else {
        if (ec.type !== ac.type) out.push(`${where}: type ${ec.type} in the Prisma schema, ${ac.type} in the database`);
        if (ec.nullable !== ac.nullable) {
          out.push(
            `${where}: ${ec.nullable ? 'optional' : 'required'} in the Prisma schema, ${ac.nullable ? 'NULL allowed' : 'NOT NULL'} in the database`,
          );
        }
        if (ec.default !== ac.default)
          out.push(
            `${where}: default ${ec.default ?? 'none'} in the Prisma schema, ${ac.default ?? 'none'} in the database`,
          );
      }
    }

    const pk = (p: TableShape['primaryKey']) => (p ? `${p.name} ${list(p.columns)}` : 'none');
    if (pk(e.primaryKey) !== pk(a.primaryKey)) {
      out.push(
        `primary key of ${tableName}: ${pk(e.primaryKey)} in the Prisma schema, ${pk(a.primaryKey)} in the database`,
      );
    }

    const idx = (i: IndexShape) => `${i.unique ? 'unique' : 'index'} ${list(i.columns)}`;
    for (const name of keys(e.indexes, a.indexes)) {
      const ei = e.indexes[name];
      const ai = a.indexes[name];
      if (!ai) out.push(`index ${name} on ${tableName}: ${idx(ei!)} in the Prisma schema, missing in the database`);
      else if (!ei) out.push(`index ${name} on ${tableName}: ${idx(ai)} in the database, not in the Prisma schema`);
      else if (idx(ei) !== idx(ai))
        out.push(`index ${name} on ${tableName}: ${idx(ei)} in the Prisma schema, ${idx(ai)} in the database`);
    }

    const fk = (f: ForeignKeyShape) =>
      `${list(f.columns)} -> ${f.table}${list(f.refColumns)} ON DELETE ${f.onDelete} ON UPDATE ${f.onUpdate}`;
    for (const name of keys(e.foreignKeys, a.foreignKeys)) {
      const ef = e.foreignKeys[name];
      const af = a.foreignKeys[name];
      if (!af) out.push(`foreign key ${name}: ${fk(ef!)} in the Prisma schema, missing in the database`);
      else if (!ef) out.push(`foreign key ${name}: ${fk(af)} in the database, not in the Prisma schema`);
      else if (fk(ef) !== fk(af))
        out.push(`foreign key ${name}: ${fk(ef)} in the Prisma schema, ${fk(af)} in the database`);
    }
  }
  return out;
}
