"""Retries that are safe, through Lance's own REST client: a request's
`header.Idempotency-Key` context entry is the header it sends, so a change
sent again under the same key answers as it first did and is done once."""

import uuid

import pytest
from lance_namespace import (
    CountTableRowsRequest,
    CreateNamespaceRequest,
    CreateTableRequest,
    InsertIntoTableRequest,
)
from lance_namespace.errors import InvalidInputError, NamespaceAlreadyExistsError

from conftest import fresh, ipc, sample


def keyed(key):
    return {"header.Idempotency-Key": key}


def test_a_keyed_change_sent_again_is_done_once(ns):
    top = fresh("idem")
    key = str(uuid.uuid4())
    first = ns.create_namespace(CreateNamespaceRequest(id=[top], context=keyed(key)))
    again = ns.create_namespace(CreateNamespaceRequest(id=[top], context=keyed(key)))
    assert again.properties == first.properties
    with pytest.raises(NamespaceAlreadyExistsError):
        ns.create_namespace(CreateNamespaceRequest(id=[top]))

    tid = [top, "t"]
    create_key = str(uuid.uuid4())
    made = ns.create_table(CreateTableRequest(id=tid, context=keyed(create_key)), ipc(sample(0, 3)))
    remade = ns.create_table(CreateTableRequest(id=tid, context=keyed(create_key)), ipc(sample(0, 3)))
    # The replay hands the table as the first answer did (on S3, with the
    # storage options it needs, which its key's record does not keep).
    assert (remade.location, remade.version) == (made.location, made.version)
    assert remade.storage_options == made.storage_options
    insert_key = str(uuid.uuid4())
    answers = [
        ns.insert_into_table(
            InsertIntoTableRequest(id=tid, mode="append", context=keyed(insert_key)),
            ipc(sample(3, 4)),
        )
        for _ in range(3)
    ]
    assert {a.version for a in answers} == {2}
    assert ns.count_table_rows(CountTableRowsRequest(id=tid)).count == 7

    # The same key with other rows is another request: refused, nothing written.
    with pytest.raises(InvalidInputError) as err:
        ns.insert_into_table(
            InsertIntoTableRequest(id=tid, mode="append", context=keyed(insert_key)),
            ipc(sample(100, 4)),
        )
    assert err.value.code == 13
    assert "another request body" in str(err.value)
    assert ns.count_table_rows(CountTableRowsRequest(id=tid)).count == 7
