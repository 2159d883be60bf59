# The runner of a lance-catalog maintenance task or backfill job on a Ray
# cluster. The catalog's Ray executor ships this file in the job's runtime
# env (LANCE_CATALOG_RUNNER) with the task (LANCE_CATALOG_TASK, JSON) and a
# credential good for that one table while the task runs
# (LANCE_CATALOG_TOKEN); the job's entrypoint executes it. It calls
# lance-ray against the catalog's REST API and ends with one line,
#   LANCE_CATALOG_RESULT {json}   or   LANCE_CATALOG_ERROR {json},
# which the executor reads from the job's log.
import json
import os
import sys
import traceback


def _emit(tag, value):
    sys.stdout.write(tag + " " + json.dumps(value, default=str) + "\n")
    sys.stdout.flush()


def _fail(code, detail):
    _emit("LANCE_CATALOG_ERROR", {"code": code, "detail": detail})
    sys.exit(1)


def _namespace(task):
    props = {"uri": task["catalog_url"]}
    token = os.environ.get("LANCE_CATALOG_TOKEN")
    if token:
        props["header.Authorization"] = "Bearer " + token
    return props


def _open(lance_ray_utils, lance, props, table):
    uri, options = lance_ray_utils.resolve_namespace_table(None, None, "rest", props, table)
    kwargs = lance_ray_utils.get_namespace_kwargs("rest", props, table)
    return lance.LanceDataset(uri, storage_options=options, **kwargs)


def _conflict(e):
    text = str(e).lower()
    return "conflict" in text or "retryable" in text


def _compact(task, props, common):
    import lance
    import lance_ray
    from lance_ray import utils
    from lance.optimize import CompactionOptions

    p = task["params"]
    options = CompactionOptions(
        target_rows_per_fragment=int(p.get("target_rows_per_fragment", 1024 * 1024)),
        max_rows_per_group=int(p.get("max_rows_per_group", 1024)),
        materialize_deletions=bool(p.get("materialize_deletions", True)),
        materialize_deletions_threshold=float(p.get("materialize_deletions_threshold", 0.1)),
    )
    if int(p.get("max_bytes_per_file") or 0) > 0:
        options["max_bytes_per_file"] = int(p["max_bytes_per_file"])
    if p.get("compaction_mode"):
        options["compaction_mode"] = p["compaction_mode"]
    before = _open(utils, lance, props, task["table"])
    read_version = before.version
    fragments_before = len(before.get_fragments())
    # Another writer committed meanwhile: plan again on its result, as the
    # in-process compaction does.
    for attempt in range(3):
        try:
            metrics = lance_ray.compact_files(compaction_options=options, **common)
            break
        except Exception as e:  # noqa: BLE001 - retried only on a conflict
            if attempt == 2 or not _conflict(e):
                raise
    after = _open(utils, lance, props, task["table"])
    out = {
        "fragments_before": fragments_before,
        "fragments_after": len(after.get_fragments()),
        "read_version": read_version,
        "version": after.version,
    }
    for name in ("fragments_removed", "fragments_added", "files_removed", "files_added"):
        out[name] = getattr(metrics, name, 0) if metrics is not None else 0
    return out


def _index(task, props, common, vector):
    import lance
    import lance_ray
    from lance_ray import utils

    p = task["params"]
    column = p.get("column") or ""
    index_type = p.get("index_type") or ("IVF_PQ" if vector else "BTREE")
    name = p.get("name") or None
    replace = bool(p.get("replace", True))
    if vector:
        extra = {}
        for key, arg in (("num_partitions", "num_partitions"), ("num_sub_vectors", "num_sub_vectors")):
            if p.get(key) is not None:
                extra[arg] = int(p[key])
        if p.get("sample_rate") is not None:
            extra["sample_rate"] = int(p["sample_rate"])
        if p.get("max_iterations") is not None:
            extra["max_iters"] = int(p["max_iterations"])
        if p.get("num_bits") is not None:
            extra["num_bits"] = int(p["num_bits"])
        if "HNSW" in index_type:
            for key in ("m", "ef_construction"):
                if p.get(key) is not None:
                    extra[key] = int(p[key])
        ds = lance_ray.create_index(
            column=column,
            index_type=index_type,
            name=name,
            replace=replace,
            metric=p.get("distance_type") or "l2",
            **extra,
            **common,
        )
    else:
        extra = {}
        if index_type.upper() in ("INVERTED", "FTS"):
            for key in ("with_position", "lower_case", "stem", "remove_stop_words", "ascii_folding",
                        "base_tokenizer", "language", "max_token_length"):
                if p.get(key) is not None:
                    extra[key] = p[key]
        ds = lance_ray.create_scalar_index(
            column=column, index_type=index_type, name=name, replace=replace, **extra, **common
        )
    ds = _open(utils, lance, props, task["table"])
    found = None
    for idx in ds.describe_indices():
        fields = [str(f) for f in (getattr(idx, "field_names", None) or [])]
        if (name and idx.name == name) or (not name and column in fields):
            found = idx
    out = {"column": column, "index_type": index_type, "dataset_version": ds.version}
    if found is not None:
        out["index_name"] = found.name
        for uuid in (getattr(seg, "uuid", None) for seg in (getattr(found, "segments", None) or [])):
            if uuid:
                out["index_uuid"] = str(uuid)
    elif name:
        out["index_name"] = name
    return out


def _backfill(task, props, common):
    """Fill an existing computed column fragment by fragment, one Ray task
    each (pylance evaluates the expression and rewrites the column's data
    for the rows `where` keeps), then one Update commit. lance-ray's
    add_columns only adds new columns, and a computed column exists from
    the start, all null, holding its binding."""
    import pickle

    import lance
    import pyarrow as pa
    import ray
    from lance import LanceOperation
    from lance_ray import utils

    p = task["params"]
    column, expression = p["column"], p["expression"]
    where = p.get("where") or None
    pinned = p.get("read_version")
    table = task["table"]
    from lance_namespace import DescribeTableRequest

    described = utils.get_or_create_namespace("rest", props).describe_table(
        DescribeTableRequest(id=table)
    )
    uri, options = described.location, described.storage_options
    # The job fills the table its request checked, not whatever took the
    # name since.
    if (uri or "").rstrip("/") != (task.get("location") or "").rstrip("/"):
        _fail(4, "table %s is no longer the table this backfill was started for" % "$".join(table))
    # Commits go through the catalog where it keeps the versions.
    managed = getattr(described, "managed_versioning", None) is True
    ns_kwargs = dict(utils.get_namespace_kwargs("rest", props, table))
    ns_kwargs["namespace_client_managed_versioning"] = managed
    workers = max(1, int(common["num_workers"]))
    ray.init(ignore_reinit_error=True)

    @ray.remote
    def fill(version, fragment_id, target):
        # Each task opens the table through the catalog, as lance-ray's do.
        kwargs = utils.get_namespace_kwargs("rest", props, table)
        ds = lance.LanceDataset(uri, storage_options=options, version=version, **kwargs)
        fragment = ds.get_fragment(fragment_id)
        values = fragment.to_table(columns={column: expression}, filter=where, with_row_id=True)
        if values.num_rows == 0:
            return None
        schema = pa.schema([pa.field(column, target), pa.field("_rowid", pa.uint64())])
        meta, fields, offsets = fragment.update_columns(
            values.cast(schema), left_on="_rowid", with_offsets=True
        )
        return pickle.dumps(meta), list(fields), offsets, values.num_rows, fragment_id

    # Another writer committed meanwhile: fill again from its result,
    # unless the request pinned the version to read.
    for attempt in range(3):
        ds = lance.LanceDataset(uri, storage_options=options, version=pinned, **ns_kwargs)
        version = ds.version
        if ds.schema.get_field_index(column) < 0:
            _fail(12, "the table has no column %r" % column)
        field = ds.schema.field(column)
        pending, filled = [], []
        for f in ds.get_fragments():
            if len(pending) >= workers:
                done, pending = ray.wait(pending, num_returns=1)
                filled += ray.get(done)
            pending.append(fill.remote(version, f.fragment_id, field.type))
        filled += ray.get(pending)
        filled = [r for r in filled if r is not None]
        rows = sum(r[3] for r in filled)
        if not filled:
            return {"rows_written": 0, "version": version, "read_version": version, "fragments": 0}
        op = LanceOperation.Update(
            updated_fragments=[pickle.loads(r[0]) for r in filled],
            fields_modified=sorted({f for r in filled for f in r[1]}),
            update_mode="rewrite_columns",
            updated_fragment_offsets={r[4]: r[2] for r in filled},
        )
        try:
            after = lance.LanceDataset.commit(
                uri, op, read_version=version, storage_options=options, **ns_kwargs
            )
            break
        except Exception as e:  # noqa: BLE001 - retried only on a conflict
            if attempt == 2 or pinned is not None or not _conflict(e):
                raise
    return {
        "rows_written": rows,
        "version": after.version,
        "read_version": version,
        "fragments": len(filled),
    }


def main():
    task = json.loads(os.environ["LANCE_CATALOG_TASK"])
    props = _namespace(task)
    common = {
        "table_id": task["table"],
        "namespace_impl": "rest",
        "namespace_properties": props,
        "num_workers": int(task.get("num_workers") or 4),
    }
    kind = task["task_type"]
    if kind == "lance_compact":
        result = _compact(task, props, common)
    elif kind == "lance_scalar_index":
        result = _index(task, props, common, vector=False)
    elif kind == "lance_vector_index":
        result = _index(task, props, common, vector=True)
    elif kind == "backfill":
        result = _backfill(task, props, common)
    else:
        _fail(13, "task type %r does not run on Ray" % kind)
    result["ray_workers"] = common["num_workers"]
    _emit("LANCE_CATALOG_RESULT", result)


# Run at load: the entrypoint executes this text, it is not imported.
try:
    main()
except SystemExit:
    raise
except BaseException as e:  # noqa: BLE001 - every failure is the task's
    # The last line says what failed; a remote task's traceback (hosts,
    # paths) goes to the job's log only.
    said = str(e).strip().splitlines()
    detail = "%s: %s" % (type(e).__name__, said[-1] if said else "")
    if _conflict(e):
        code = 14
    elif isinstance(e, (ValueError, TypeError)):
        code = 13
    else:
        code = 18
    traceback.print_exc()
    _fail(code, detail[:2000])
