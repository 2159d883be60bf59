"""The operations the reference server leaves unimplemented, through the real
lance_namespace client: rename, field metadata, computed column + backfill,
and a SQL materialized view checked against the same query run directly."""
import json
import time
import urllib.request

import pyarrow as pa
import pytest
from lance_namespace import (
    AlterTableAddColumnsRequest,
    AlterTableBackfillColumnsRequest,
    CountTableRowsRequest,
    CreateMaterializedViewRequest,
    CreateNamespaceRequest,
    CreateTableRequest,
    DescribeTableRequest,
    InsertIntoTableRequest,
    RefreshMaterializedViewRequest,
    RenameTableRequest,
    TableExistsRequest,
)
from lance_namespace.errors import TableNotFoundError

from conftest import fresh_namespace, ipc, query_ids, sample


def job_state(server, job_id):
    req = urllib.request.Request(
        f"{server['url']}/v1/job/{job_id}/describe", data=b"{}",
        headers={"content-type": "application/json"}, method="POST")
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())


def wait_job(server, job_id):
    for _ in range(400):
        job = job_state(server, job_id)
        if job["state"] in ("succeeded", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def test_rename_keeps_data(ns):
    top = fresh_namespace(ns, "ops")
    other = fresh_namespace(ns, "ops")
    ns.create_table(CreateTableRequest(id=[top, "a"]), ipc(sample(0, 4)))
    ns.rename_table(RenameTableRequest(id=[top, "a"], new_table_name="b", new_namespace_id=[other]))
    with pytest.raises(TableNotFoundError):
        ns.table_exists(TableExistsRequest(id=[top, "a"]))
    assert ns.count_table_rows(CountTableRowsRequest(id=[other, "b"])).count == 4


def test_field_metadata_merges(ns, server):
    # pylance's RestNamespace has no update_field_metadata; the spec's
    # generated urllib3 client (installed with lance-namespace) does.
    import lance_namespace_urllib3_client as u
    from lance_namespace_urllib3_client.models import (
        UpdateFieldMetadataEntry, UpdateFieldMetadataRequest)

    top = fresh_namespace(ns, "ops")
    tid = [top, "t"]
    ns.create_table(CreateTableRequest(id=tid), ipc(sample(0, 2)))
    api = u.TableApi(u.ApiClient(u.Configuration(host=server["url"])))
    api.update_field_metadata("$".join(tid), UpdateFieldMetadataRequest(
        id=tid, updates=[UpdateFieldMetadataEntry(path="x", metadata={"unit": "m"})]))
    r = api.update_field_metadata("$".join(tid), UpdateFieldMetadataRequest(
        id=tid, updates=[UpdateFieldMetadataEntry(path="x", metadata={"scale": "2"})]))
    assert r.fields["x"] == {"unit": "m", "scale": "2"}
    assert r.version == 3


def test_computed_column_backfill(ns, server):
    top = fresh_namespace(ns, "ops")
    tid = [top, "t"]
    ns.create_table(CreateTableRequest(id=tid), ipc(sample(0, 8)))
    ns.alter_table_add_columns(AlterTableAddColumnsRequest(
        id=tid, new_columns=[{"name": "ten_x", "computed": "x * 10"}]))
    assert ns.count_table_rows(CountTableRowsRequest(id=tid, predicate="ten_x IS NULL")).count == 8
    job = ns.alter_table_backfill_columns(AlterTableBackfillColumnsRequest(
        id=tid, column="ten_x", where="id < 5"))
    done = wait_job(server, job.job_id)
    assert done["state"] == "succeeded", done
    assert done["rows_written"] == 5
    assert ns.count_table_rows(CountTableRowsRequest(id=tid, predicate="ten_x = x * 10")).count == 5


def test_sql_materialized_view(ns, server):
    top = fresh_namespace(ns, "ops")
    src = [top, "orders"]
    ns.create_table(CreateTableRequest(id=src), ipc(sample(0, 20)))
    sql = f'SELECT id, s FROM "{top}$orders" WHERE id % 3 = 0'
    created = ns.create_materialized_view(CreateMaterializedViewRequest(
        id=[top, "thirds"], kind="query", source_query=sql, output_schema="", with_no_data=False))
    assert wait_job(server, created.job_id)["state"] == "succeeded"
    expected = [i for i in range(20) if i % 3 == 0]
    assert query_ids(ns, [top, "thirds"]) == expected

    ns.insert_into_table(InsertIntoTableRequest(id=src, mode="append"), ipc(sample(20, 10)))
    refresh = ns.refresh_materialized_view(RefreshMaterializedViewRequest(id=[top, "thirds"]))
    done = wait_job(server, refresh.job_id)
    assert done["state"] == "succeeded", done
    # The view holds what the same query over the source gives now.
    assert query_ids(ns, [top, "thirds"]) == [i for i in range(30) if i % 3 == 0]
    props = ns.describe_table(DescribeTableRequest(id=[top, "thirds"])).properties
    assert props["lance-catalog.mv.source_query"] == sql
    assert json.loads(props["lance-catalog.mv.source_versions"]) == {f"{top}$orders": 2}


def test_batch_commit_is_all_or_nothing(ns, server):
    import lance_namespace_urllib3_client as u
    from lance_namespace_urllib3_client.exceptions import ApiException
    from lance_namespace_urllib3_client.models import (
        BatchCommitTablesRequest, BatchCreateTableVersionsRequest, CommitTableOperation,
        CreateTableVersionEntry, DeclareTableRequest, DeregisterTableRequest)

    top = fresh_namespace(ns, "ops")
    ns.create_table(CreateTableRequest(id=[top, "old"]), ipc(sample(0, 3)))
    api = u.TableApi(u.ApiClient(u.Configuration(host=server["url"])))

    def declare(name):
        return CommitTableOperation(declare_table=DeclareTableRequest(id=[top, name]))

    deregister_old = CommitTableOperation(deregister_table=DeregisterTableRequest(id=[top, "old"]))
    # Declaring a table that exists fails the whole batch: nothing happens.
    with pytest.raises(ApiException) as err:
        api.batch_commit_tables(BatchCommitTablesRequest(
            operations=[declare("new"), declare("old")]))
    assert err.value.status == 409
    assert json.loads(err.value.body)["code"] == 5
    ns.table_exists(TableExistsRequest(id=[top, "old"]))
    with pytest.raises(TableNotFoundError):
        ns.table_exists(TableExistsRequest(id=[top, "new"]))

    done = api.batch_commit_tables(BatchCommitTablesRequest(
        operations=[declare("new"), deregister_old]))
    assert len(done.results) == 2
    ns.table_exists(TableExistsRequest(id=[top, "new"]))
    with pytest.raises(TableNotFoundError):
        ns.table_exists(TableExistsRequest(id=[top, "old"]))

    # A version that is not the next one conflicts (14), and nothing changes.
    ns.create_table(CreateTableRequest(id=[top, "v"]), ipc(sample(0, 2)))
    with pytest.raises(ApiException) as err:
        api.batch_create_table_versions(BatchCreateTableVersionsRequest(entries=[
            CreateTableVersionEntry(id=[top, "v"], version=5, manifest_path="nowhere")]))
    assert json.loads(err.value.body)["code"] == 14
    assert ns.count_table_rows(CountTableRowsRequest(id=[top, "v"])).count == 2
