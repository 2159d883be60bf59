"""Arrow Flight with pyarrow.flight: a million rows in, back out with a
filter and a column subset, flight info and listing."""
import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.flight as flight
import pytest
from lance_namespace import CreateNamespaceRequest

from conftest import fresh, sample


@pytest.fixture()
def fclient(server):
    c = flight.FlightClient(server["url"].replace("http://", "grpc+tcp://"))
    yield c
    c.close()


def test_flight_million_rows(ns, fclient):
    top = fresh("fl")
    ns.create_namespace(CreateNamespaceRequest(id=[top]))
    n = 1_000_000
    tbl = sample(0, n)
    descriptor = flight.FlightDescriptor.for_path(top, "big")
    writer, reader = fclient.do_put(descriptor, tbl.schema)
    writer.write_table(tbl, max_chunksize=65536)
    writer.done_writing()
    outcome = json.loads(reader.read().to_pybytes())
    writer.close()
    assert outcome == {"version": 1, "num_rows": n, "created": True}

    info = fclient.get_flight_info(descriptor)
    assert info.total_records == n
    assert info.schema.names == ["id", "x", "s"]
    everything = fclient.do_get(info.endpoints[0].ticket).read_all()
    assert everything.num_rows == n

    ticket = flight.Ticket(json.dumps(
        {"id": [top, "big"], "filter": "id % 1000 = 0", "columns": ["id", "s"]}).encode())
    some = fclient.do_get(ticket).read_all()
    assert some.column_names == ["id", "s"]
    assert some.num_rows == n // 1000
    assert pc.sum(some.column("id")).as_py() == sum(range(0, n, 1000))

    listed = list(fclient.list_flights(json.dumps({"id": [top]}).encode()))
    assert [f.descriptor.path for f in listed] == [[top.encode(), b"big"]]


def test_flight_errors_carry_spec_codes(fclient):
    ticket = flight.Ticket(json.dumps({"id": ["nowhere", "t"]}).encode())
    # pyarrow raises NOT_FOUND as ArrowKeyError.
    with pytest.raises(pa.ArrowKeyError) as err:
        fclient.do_get(ticket).read_all()
    assert "does not exist" in str(err.value)
