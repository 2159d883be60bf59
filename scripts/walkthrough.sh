#!/usr/bin/env bash
# The README's curl walkthrough (the Gravitino seed's lance-rest-walkthrough),
# against a server started with `cargo run -- serve --prefix /lance`.
set -euo pipefail
LANCE_URI="http://127.0.0.1:2333/lance"
CATALOG="lance_catalog"
SCHEMA="demo"
TABLE="articles"
TABLE_LOCATION="${SCHEMA}_${TABLE}.lance"   # a directory directly under the catalog root
NS="${CATALOG}%24${SCHEMA}"
TBL="${NS}%24${TABLE}"
AUTH="Authorization: Bearer local-token"

curl -sSf -X POST "${LANCE_URI}/v1/namespace/${CATALOG}/create" \
  -H "$AUTH" -H 'Content-Type: application/json' \
  -d '{"mode": "exist_ok", "properties": {"lance.storage.aws_region": "us-east-1"}}' | jq .

curl -sSf -X POST "${LANCE_URI}/v1/namespace/${NS}/create" \
  -H "$AUTH" -H 'Content-Type: application/json' -d '{"mode": "exist_ok"}' | jq .

curl -sSf "${LANCE_URI}/v1/namespace/${CATALOG}/list" -H "$AUTH" | jq .

python3 -c '
import sys, pyarrow as pa
schema = pa.schema([("id", pa.int64()), ("title", pa.string()), ("body", pa.string())])
pa.ipc.new_stream(sys.stdout.buffer, schema).close()
' > schema.arrow

curl -sSf -X POST "${LANCE_URI}/v1/table/${TBL}/create" \
  -H "$AUTH" -H 'Content-Type: application/vnd.apache.arrow.stream' \
  -H "x-lance-table-location: ${TABLE_LOCATION}" \
  --data-binary @schema.arrow | jq .

curl -sSf "${LANCE_URI}/v1/namespace/${NS}/table/list" -H "$AUTH" | jq .

curl -sSf -X POST "${LANCE_URI}/v1/table/${TBL}/describe" \
  -H "$AUTH" -H 'Content-Type: application/json' -d '{"load_detailed_metadata": true}' | jq .

curl -sSf -X POST "${LANCE_URI}/v1/table/${TBL}/alter_columns" \
  -H "$AUTH" -H 'Content-Type: application/json' \
  -d '{"alterations": [{"path": "body", "rename": "content"}]}' | jq .

curl -sSf -X POST "${LANCE_URI}/v1/table/${TBL}/drop_columns" \
  -H "$AUTH" -H 'Content-Type: application/json' -d '{"columns": ["title"]}' | jq .

curl -sSf -X POST "${LANCE_URI}/v1/table/${TBL}/drop" \
  -H "$AUTH" -H 'Content-Type: application/json' -d '{}' | jq .
