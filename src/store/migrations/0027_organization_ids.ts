/**
 * Migration 0027_organization_ids: every organization id is `org_…` (spec 1,
 * id prefixes). Earlier versions took an organization's name from
 * SVC_API_KEYS or the CLI as it was given; an id stored without the prefix
 * (`acme`) becomes `org_acme` in every table that has the column, so the data
 * stays with the keys once SVC_API_KEYS names the organization `org_acme`
 * (start-up refuses the old form, saying so).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ readonly table_name: string }>`SELECT c.table_name FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND c.column_name = 'organization_id' AND t.table_type = 'BASE TABLE'
    ORDER BY c.table_name`
  for (const { table_name } of tables) {
    yield* sql`UPDATE ${sql(table_name)} SET organization_id = 'org_' || organization_id
      WHERE left(organization_id, 4) <> 'org_'`
  }
})
