import { sql, SqliteAdapter, type Kysely } from 'kysely';

/**
 * `meta.total` of every catalogue list counts a kind in a workspace (spec "Pagination"); with
 * 100,000 records a `count(*)` per page cost more than the page itself. Triggers keep one counter
 * per (workspace, kind, parent) exact on every insert and delete — whoever writes (API, controllers,
 * purges, a workspace's cascade) — so a list reads one row instead of counting.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('resource_counts')
    .addColumn('workspace', 'text', (c) => c.notNull().references('workspaces.name').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('parent', 'text', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('resource_counts_pk', ['workspace', 'kind', 'parent'])
    .execute();
  await sql`insert into resource_counts (workspace, kind, parent, n)
    select workspace, kind, parent, count(*) from resources group by workspace, kind, parent`.execute(db);

  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    await sql`create trigger resources_count_insert after insert on resources begin
      insert into resource_counts (workspace, kind, parent, n) values (new.workspace, new.kind, new.parent, 1)
        on conflict (workspace, kind, parent) do update set n = n + 1;
    end`.execute(db);
    await sql`create trigger resources_count_delete after delete on resources begin
      update resource_counts set n = n - 1
        where workspace = old.workspace and kind = old.kind and parent = old.parent;
    end`.execute(db);
    return;
  }
  await sql`create function resources_count() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into resource_counts as c (workspace, kind, parent, n)
          values (new.workspace, new.kind, new.parent, 1)
          on conflict (workspace, kind, parent) do update set n = c.n + 1;
      else
        update resource_counts set n = n - 1
          where workspace = old.workspace and kind = old.kind and parent = old.parent;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger resources_count after insert or delete on resources
    for each row execute function resources_count()`.execute(db);
}
