#!/usr/bin/env bash
# The curl walkthrough of docs/walkthrough.md (the Gravitino seed's lance-rest-walkthrough
# and its "Create namespaces and tables" examples), against a server started
# with `cargo run -- serve --prefix /lance` (root ./lance-catalog-data). The
# seed's `s3://{bucket}` is the server's root here: ROOT_URI.
set -euo pipefail
LANCE_URI="${LANCE_URI:-http://127.0.0.1:2333/lance}"
CATALOG="lance_catalog"
SCHEMA="demo"
TABLE="articles"
ROOT_URI="${ROOT_URI:-file://$(pwd)/lance-catalog-data}"
TABLE_LOCATION="lance/${SCHEMA}/${TABLE}"   # nested under the catalog root
NS="${CATALOG}%24${SCHEMA}"
TBL="${NS}%24${TABLE}"
# A local user's name and password (curl -u) when LANCE_USER is set, else a
# bearer token (any token passes a server started with --auth none).
if [ -n "${LANCE_USER:-}" ]; then
  AUTH=(-u "${LANCE_USER}:${LANCE_PASSWORD}")
else
  AUTH=(-H "Authorization: Bearer ${LANCE_TOKEN:-local-token}")
fi

curl -sSf -X POST "${LANCE_URI}/v1/namespace/${CATALOG}/create" \
  "${AUTH[@]}" -H 'Content-Type: application/json' \
  -d '{"mode": "exist_ok", "properties": {"lance.storage.aws_region": "us-east-1"}}' | jq .

curl -sSf -X POST "${LANCE_URI}/v1/namespace/${NS}/create" \
  "${AUTH[@]}" -H 'Content-Type: application/json' -d '{"mode": "exist_ok"}' | jq .

curl -sSf "${LANCE_URI}/v1/namespace/${CATALOG}/list" "${AUTH[@]}" | jq .

python3 -c '
import sys, pyarrow as pa
schema = pa.schema([("id", pa.int64()), ("title", pa.string()), ("body", pa.string())])
pa.ipc.new_stream(sys.stdout.buffer, schema).close()
' > schema.arrow

curl -sSf -X POST "${LANCE_URI}/v1/table/${TBL}/create" \
  "${AUTH[@]}" -H 'Content-Type: application/vnd.apache.arrow.stream' \
  -H "x-lance-table-location: ${TABLE_LOCATION}" \
  --data-binary @schema.arrow | jq .

curl -sSf "${LANCE_URI}/v1/namespace/${NS}/table/list" "${AUTH[@]}" | jq .

curl -sSf -X POST "${LANCE_URI}/v1/table/${TBL}/describe" \
  "${AUTH[@]}" -H 'Content-Type: application/json' -d '{"load_detailed_metadata": true}' | jq .

curl -sSf -X POST "${LANCE_URI}/v1/table/${TBL}/alter_columns" \
  "${AUTH[@]}" -H 'Content-Type: application/json' \
  -d '{"alterations": [{"path": "body", "rename": "content"}]}' | jq .

curl -sSf -X POST "${LANCE_URI}/v1/table/${TBL}/drop_columns" \
  "${AUTH[@]}" -H 'Content-Type: application/json' -d '{"columns": ["title"]}' | jq .

curl -sSf -X POST "${LANCE_URI}/v1/table/${TBL}/drop" \
  "${AUTH[@]}" -H 'Content-Type: application/json' -d '{}' | jq .

# The seed's "Create namespaces and tables": register an existing dataset,
# declare a table, create one at a nested location of its choosing.
curl -sSf -X POST "${LANCE_URI}/v1/namespace/lance_catalog%24schema/create" \
  "${AUTH[@]}" -H 'Content-Type: application/json' \
  -d '{"id": ["lance_catalog", "schema"], "mode": "exist_ok"}' | jq .

# An existing Lance dataset to register (written by the server: create,
# then deregister, which keeps the data).
curl -sSf -X POST "${LANCE_URI}/v1/table/lance_catalog%24schema%24seed/create" \
  "${AUTH[@]}" -H 'Content-Type: application/vnd.apache.arrow.stream' \
  -H "x-lance-table-location: ${ROOT_URI}/lance_catalog/schema/table01" \
  --data-binary @schema.arrow | jq .
curl -sSf -X POST "${LANCE_URI}/v1/table/lance_catalog%24schema%24seed/deregister" \
  "${AUTH[@]}" -H 'Content-Type: application/json' -d '{}' | jq .

curl -sSf -X POST "${LANCE_URI}/v1/table/lance_catalog%24schema%24table01/register" \
  -H 'Content-Type: application/json' "${AUTH[@]}" \
  -d '{
    "id": ["lance_catalog", "schema", "table01"],
    "location": "'"${ROOT_URI}"'/lance_catalog/schema/table01",
    "mode": "create"
  }' | jq .

curl -sSf -X POST "${LANCE_URI}/v1/table/lance_catalog%24schema%24table04/declare" \
  -H 'Content-Type: application/json' "${AUTH[@]}" \
  -d '{
    "id": ["lance_catalog", "schema", "table04"],
    "location": "'"${ROOT_URI}"'/lance_catalog/schema/table04"
  }' | jq .

curl -sSf -X POST "${LANCE_URI}/v1/table/lance_catalog%24schema%24table03/create" \
  -H 'Content-Type: application/vnd.apache.arrow.stream' "${AUTH[@]}" \
  -H "x-lance-table-location: ${ROOT_URI}/lance_catalog/schema/table03" \
  -H "x-lance-table-properties: {}" \
  --data-binary @schema.arrow | jq .

curl -sSf "${LANCE_URI}/v1/namespace/lance_catalog%24schema/table/list" "${AUTH[@]}" | jq .
