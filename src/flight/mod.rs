//! Arrow Flight, the data plane: query, create, insert and merge-insert as
//! columnar streams, over the same core and with the same error codes as
//! REST and gRPC (the spec code travels in `lance-error-code` metadata).
//!
//! - A path descriptor is a table id (its segments). A command descriptor is
//!   JSON naming its operation's row by its method (or the word Flight
//!   offered first): `{"op": "query_table", ...ScanSpec}` (`query`),
//!   `{"op": "create_table", "id": [...], "mode": "create|exist_ok|overwrite"}`
//!   (`create`), `{"op": "insert_into_table", "id": [...], "mode":
//!   "append|overwrite"}` (`insert`) or `{"op": "merge_insert_into_table",
//!   "id": [...], "on": [...], "when_matched_update_all": true, ...}`
//!   (`merge_insert`).
//! - Tickets are [`ScanSpec`]s in JSON: DoGet streams batches straight from
//!   the Lance scanner.
//! - GetFlightInfo, GetSchema and ListFlights answer from the table's
//!   metadata, admitted as a describe is (read_metadata): no scan starts;
//!   total_records is the manifest's count for a whole-table ticket, else -1.
//! - DoPut with a path descriptor creates the table when missing and appends
//!   otherwise; all batches of one DoPut are one commit, answered by one
//!   PutResult whose app_metadata is the JSON [`WriteOutcome`].
//! - ListFlights takes a JSON list-tables request (`{"id": ["sales"]}`; empty
//!   lists every table).
//! - DoAction serves every spec operation whose request and answer are
//!   JSON, by its method (`actions.rs`), admitted as over REST.

mod actions;

use std::sync::Arc;

use crate::api::spec::Spec;
use crate::api::{op, OpDef};
use arrow_flight::decode::FlightRecordBatchStream;
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::flight_service_server::FlightService;
use arrow_flight::{
    Action, ActionType, Criteria, Empty, FlightData, FlightDescriptor, FlightEndpoint, FlightInfo,
    HandshakeRequest, HandshakeResponse, PollInfo, PutResult, SchemaAsIpc, SchemaResult, Ticket,
};
use arrow_ipc::writer::IpcWriteOptions;
use arrow_schema::{Schema, SchemaRef};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use lance_namespace::models::ListTablesRequest;
use serde_json::Value;
use tonic::{Request, Response, Status, Streaming};

use crate::core::{ScanSpec, WriteOp};
use crate::error::CatalogError;
use crate::governance::{Governance, Put, StreamedBody, Tap};
use crate::transport::status::to_status;

/// The Flight service over the governance layer, with its message limits.
pub fn service(
    gov: Arc<Governance>,
    max_message: usize,
) -> arrow_flight::flight_service_server::FlightServiceServer<CatalogFlight> {
    arrow_flight::flight_service_server::FlightServiceServer::new(CatalogFlight::new(gov))
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message)
}

/// The Flight service over the catalog.
#[derive(Debug)]
pub struct CatalogFlight {
    gov: Arc<Governance>,
}

impl CatalogFlight {
    pub fn new(gov: Arc<Governance>) -> Self {
        Self { gov }
    }

    /// A scan of the table's warehouse (DoGet), through the read guards, as
    /// the caller whose headers came with the call.
    async fn scan(
        &self,
        spec: &ScanSpec,
        headers: &http::HeaderMap,
    ) -> Result<crate::core::Scan, Status> {
        let credentials = crate::transport::headers::credentials(headers);
        self.gov
            .scan_streamed(spec, &credentials)
            .await
            .map_err(to_status)
    }

    /// The schema and row count a ticket for `spec` would stream, from the
    /// table's metadata, as the caller whose headers came with the call.
    async fn outline(
        &self,
        spec: &ScanSpec,
        headers: &http::HeaderMap,
    ) -> Result<(SchemaRef, Option<u64>), Status> {
        let credentials = crate::transport::headers::credentials(headers);
        self.gov
            .scan_outline(spec, &credentials)
            .await
            .map_err(to_status)
    }
}

fn invalid(message: impl Into<String>) -> Status {
    to_status(CatalogError::invalid(message))
}

fn json<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, Status> {
    serde_json::from_slice(bytes)
        .map_err(|e| invalid(format!("{what} is not valid JSON for it: {e}")))
}

/// What a descriptor asks for: a table's path (read it, or create it or
/// append to it), or a command naming its operation's row.
enum Command {
    Path,
    Row(&'static OpDef),
}

/// The rows a command descriptor may name, by their method or by the word
/// Flight offered first.
const COMMANDS: [(&OpDef, &str); 4] = [
    (&op::QueryTable, "query"),
    (&op::CreateTable, "create"),
    (&op::InsertIntoTable, "insert"),
    (&op::MergeInsertIntoTable, "merge_insert"),
];

/// A descriptor as its command and its JSON request.
fn command(desc: &FlightDescriptor) -> Result<(Command, Value), Status> {
    if !desc.path.is_empty() {
        return Ok((Command::Path, serde_json::json!({ "id": desc.path })));
    }
    let mut value: Value = json(&desc.cmd, "the command descriptor")?;
    let word = value
        .as_object_mut()
        .and_then(|o| o.remove("op"))
        .and_then(|v| v.as_str().map(str::to_string))
        .ok_or_else(|| invalid("a command descriptor is a JSON object with an \"op\""))?;
    let row = COMMANDS
        .iter()
        .find(|(op, first)| op.action == word || *first == word)
        .map(|(op, _)| *op)
        .ok_or_else(|| {
            invalid(format!(
                "unknown operation {word:?}: a command names query_table, create_table, insert_into_table or merge_insert_into_table"
            ))
        })?;
    Ok((Command::Row(row), value))
}

fn scan_spec(desc: &FlightDescriptor) -> Result<ScanSpec, Status> {
    match command(desc)? {
        (Command::Path, v) => read_spec(v),
        (Command::Row(row), v) if *row == op::QueryTable => read_spec(v),
        (Command::Row(row), _) => Err(invalid(format!(
            "{row} does not describe a readable flight; use a path or {{\"op\": \"query_table\"}}"
        ))),
    }
}

fn read_spec(v: Value) -> Result<ScanSpec, Status> {
    serde_json::from_value(v).map_err(|e| invalid(format!("not a query request: {e}")))
}

fn id_of(v: &Value) -> Vec<String> {
    v.get("id")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The caller's identity from a call's headers, as a spec request holds it.
fn identity(headers: &http::HeaderMap) -> Option<Box<lance_namespace::models::Identity>> {
    let c = crate::transport::headers::credentials(headers);
    (!c.is_empty()).then(|| {
        Box::new(lance_namespace::models::Identity {
            api_key: c.api_key,
            auth_token: c.auth_token,
        })
    })
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

impl CatalogFlight {
    async fn info(
        &self,
        spec: ScanSpec,
        descriptor: FlightDescriptor,
        headers: &http::HeaderMap,
    ) -> Result<FlightInfo, Status> {
        let (schema, exact_rows) = self.outline(&spec, headers).await?;
        let ticket = serde_json::to_vec(&spec).map_err(|e| invalid(e.to_string()))?;
        let info = FlightInfo::new()
            .try_with_schema(&schema)
            .map_err(|e| to_status(CatalogError::internal(e.to_string())))?
            .with_endpoint(FlightEndpoint::new().with_ticket(Ticket::new(ticket)))
            .with_descriptor(descriptor)
            .with_total_records(exact_rows.map(|n| n as i64).unwrap_or(-1));
        Ok(info)
    }
}

type Stream<T> = BoxStream<'static, Result<T, Status>>;

#[tonic::async_trait]
impl FlightService for CatalogFlight {
    type HandshakeStream = Stream<HandshakeResponse>;
    type ListFlightsStream = Stream<FlightInfo>;
    type DoGetStream = Stream<FlightData>;
    type DoPutStream = Stream<PutResult>;
    type DoExchangeStream = Stream<FlightData>;
    type DoActionStream = Stream<arrow_flight::Result>;
    type ListActionsStream = Stream<ActionType>;

    /// A local user's name and password (`authorization: Basic …`, as
    /// Arrow's `authenticate_basic_token` sends them) answer a session
    /// token in the `authorization: Bearer …` response header, which the
    /// client sends on its later calls. Other credentials travel on each
    /// call themselves: there is no session to set up for them.
    async fn handshake(
        &self,
        request: Request<Streaming<HandshakeRequest>>,
    ) -> Result<Response<Self::HandshakeStream>, Status> {
        let headers = request.metadata().clone().into_headers();
        let credentials = crate::transport::headers::credentials(&headers);
        let session = self.gov.sign_in(&credentials).await.map_err(to_status)?;
        let mut response = Response::new(futures::stream::empty().boxed());
        if let Some(session) = session {
            let value = format!("Bearer {}", session.token)
                .parse()
                .map_err(|_| Status::internal("the session token is not a header value"))?;
            response.metadata_mut().insert("authorization", value);
        }
        Ok(response)
    }

    async fn list_flights(
        &self,
        request: Request<Criteria>,
    ) -> Result<Response<Self::ListFlightsStream>, Status> {
        let headers = request.metadata().clone().into_headers();
        let criteria = request.into_inner().expression;
        let mut listing: ListTablesRequest = if criteria.is_empty() {
            ListTablesRequest::default()
        } else {
            json(&criteria, "the criteria (a list-tables request)")?
        };
        listing.identity = identity(&headers);
        // Declared tables have no data to fly yet.
        listing.include_declared = Some(false);
        let tables: Vec<Vec<String>> = match listing.id.clone() {
            None => {
                let all = self.gov.list_all_tables(listing).await;
                all.map_err(to_status)?
                    .tables
                    .iter()
                    .map(|t| crate::core::manifest_id(t))
                    .collect()
            }
            Some(ns) => {
                let listed = self.gov.list_tables(listing).await;
                listed
                    .map_err(to_status)?
                    .tables
                    .into_iter()
                    .map(|t| ns.iter().cloned().chain(std::iter::once(t)).collect())
                    .collect()
            }
        };
        // Each from its table's metadata: listing scans nothing.
        let mut infos = Vec::with_capacity(tables.len());
        for id in tables {
            let spec = ScanSpec {
                id: id.clone(),
                ..Default::default()
            };
            match self
                .info(spec, FlightDescriptor::new_path(id.clone()), &headers)
                .await
            {
                Ok(info) => infos.push(Ok(info)),
                // Dropped or renamed since it was listed.
                Err(status) if status.code() == tonic::Code::NotFound => {}
                Err(status) => return Err(status),
            }
        }
        Ok(Response::new(futures::stream::iter(infos).boxed()))
    }

    async fn get_flight_info(
        &self,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let headers = request.metadata().clone().into_headers();
        let descriptor = request.into_inner();
        let spec = scan_spec(&descriptor)?;
        Ok(Response::new(self.info(spec, descriptor, &headers).await?))
    }

    async fn poll_flight_info(
        &self,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<PollInfo>, Status> {
        let info = self.get_flight_info(request).await?.into_inner();
        Ok(Response::new(PollInfo::new().with_info(info)))
    }

    async fn get_schema(
        &self,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<SchemaResult>, Status> {
        let headers = request.metadata().clone().into_headers();
        let spec = scan_spec(&request.into_inner())?;
        let (schema, _) = self.outline(&spec, &headers).await?;
        let result: SchemaResult = SchemaAsIpc::new(&schema, &IpcWriteOptions::default())
            .try_into()
            .map_err(|e: arrow_schema::ArrowError| {
                to_status(CatalogError::internal(e.to_string()))
            })?;
        Ok(Response::new(result))
    }

    async fn do_get(
        &self,
        request: Request<Ticket>,
    ) -> Result<Response<Self::DoGetStream>, Status> {
        let headers = request.metadata().clone().into_headers();
        let spec: ScanSpec = json(&request.into_inner().ticket, "the ticket (a query request)")?;
        let scan = self.scan(&spec, &headers).await?;
        let batches = scan
            .batches
            .map_err(|e| FlightError::Tonic(Box::new(to_status(e))));
        let stream = FlightDataEncoderBuilder::new()
            .with_schema(scan.schema)
            .build(batches)
            .map_err(Status::from);
        Ok(Response::new(stream.boxed()))
    }

    async fn do_put(
        &self,
        request: Request<Streaming<FlightData>>,
    ) -> Result<Response<Self::DoPutStream>, Status> {
        let headers = request.metadata().clone().into_headers();
        let mut input = request.into_inner();
        let first = input
            .message()
            .await?
            .ok_or_else(|| invalid("DoPut received no data"))?;
        let descriptor = first
            .flight_descriptor
            .clone()
            .ok_or_else(|| invalid("the first DoPut message must carry a flight descriptor"))?;
        let schema = Arc::new(Schema::try_from(&first).map_err(|e| {
            invalid(format!(
                "the first DoPut message is not an Arrow schema: {e}"
            ))
        })?);
        let (op, cmd) = command(&descriptor)?;
        let id = id_of(&cmd);
        let branch = str_of(&cmd, "branch");
        let write = match op {
            Command::Path => WriteOp::CreateOrAppend,
            Command::Row(row) if *row == op::CreateTable => WriteOp::Create {
                mode: str_of(&cmd, "mode"),
                properties: cmd
                    .get("properties")
                    .map(|p| serde_json::from_value(p.clone()))
                    .transpose()
                    .map_err(|e| invalid(format!("properties: {e}")))?,
            },
            Command::Row(row) if *row == op::InsertIntoTable => WriteOp::Insert {
                overwrite: crate::core::insert_mode_is_overwrite(str_of(&cmd, "mode").as_deref())
                    .map_err(to_status)?,
            },
            Command::Row(row) if *row == op::MergeInsertIntoTable => {
                WriteOp::MergeInsert(Box::new(
                    serde_json::from_value(cmd.clone())
                        .map_err(|e| invalid(format!("not a merge-insert request: {e}")))?,
                ))
            }
            Command::Row(row) => {
                return Err(invalid(format!(
                    "DoPut writes a table: {row} is read with DoGet"
                )))
            }
        };
        // What a retry under the call's Idempotency-Key must send again:
        // the descriptor and the very same data (its messages' bytes).
        let asked = serde_json::json!({ "path": matches!(op, Command::Path), "command": cmd });
        let tap = Arc::new(Tap::default());
        let (fed, ended) = (tap.clone(), tap.clone());
        let messages = futures::stream::once(async move { Ok(first) })
            .chain(input)
            .map_ok(move |m: FlightData| {
                fed.feed(&m.data_header);
                fed.feed(&m.data_body);
                m
            })
            .chain(futures::stream::poll_fn(move |_| {
                ended.end();
                std::task::Poll::Ready(None)
            }))
            .map_err(|s: Status| FlightError::Tonic(Box::new(s)));
        let batches = FlightRecordBatchStream::new_from_flight_data(messages)
            .map_err(|e| {
                CatalogError::invalid(format!("the Flight stream is not valid Arrow data: {e}"))
            })
            .boxed();
        let put = Put {
            id,
            branch,
            write,
            schema,
            asked,
        };
        let call = crate::transport::headers::call(&headers);
        let outcome = self
            .gov
            .write_streamed(put, StreamedBody::new(tap, batches), &call)
            .await
            .map_err(to_status)?;
        let metadata = serde_json::to_vec(&outcome).map_err(|e| invalid(e.to_string()))?;
        let result = PutResult {
            app_metadata: metadata.into(),
        };
        Ok(Response::new(
            futures::stream::once(async { Ok(result) }).boxed(),
        ))
    }

    async fn do_exchange(
        &self,
        _request: Request<Streaming<FlightData>>,
    ) -> Result<Response<Self::DoExchangeStream>, Status> {
        Err(to_status(CatalogError::unsupported(
            "DoExchange is not offered: use DoGet to read and DoPut to write",
        )))
    }

    async fn do_action(
        &self,
        request: Request<Action>,
    ) -> Result<Response<Self::DoActionStream>, Status> {
        let headers = request.metadata().clone().into_headers();
        let action = request.into_inner();
        let body = actions::run(self.gov.as_ref(), &action.r#type, &action.body, &headers).await?;
        let result = arrow_flight::Result { body: body.into() };
        Ok(Response::new(
            futures::stream::once(async { Ok(result) }).boxed(),
        ))
    }

    async fn list_actions(
        &self,
        _request: Request<Empty>,
    ) -> Result<Response<Self::ListActionsStream>, Status> {
        let actions = actions::offered();
        Ok(Response::new(
            futures::stream::iter(actions.into_iter().map(Ok)).boxed(),
        ))
    }
}
