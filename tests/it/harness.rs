//! Test environments: a fresh storage root, and the namespace to test.

use lance_catalog::api::call::Call;
use std::sync::Arc;

use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use lance_catalog::api::control::{ControlPlane, CreateProjectRequest, CreateWarehouseRequest};
use lance_catalog::governance::{Governance, GovernanceConfig, Scoped};
use lance_catalog::rest::RestConfig;
use lance_catalog::{Catalog, CatalogError, StorageConfig};
use lance_namespace::LanceNamespace;
use lance_namespace_impls::RestNamespaceBuilder;
use tempfile::TempDir;

pub struct Env {
    pub ns: Arc<dyn LanceNamespace>,
    /// The server's base URL, when the environment serves REST.
    pub base: Option<String>,
    _dir: TempDir,
    /// The default warehouse's root, when the table root is another one.
    _home: Option<TempDir>,
}

impl Env {
    /// The storage root's directory.
    pub fn root(&self) -> &std::path::Path {
        self._dir.path()
    }

    pub async fn catalog() -> (Catalog, TempDir) {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = StorageConfig {
            root: dir.path().to_string_lossy().into_owned(),
            ..Default::default()
        };
        (Catalog::open(&cfg).await.expect("open catalog"), dir)
    }

    pub async fn in_process() -> Self {
        let (catalog, dir) = Self::catalog().await;
        Self {
            ns: Arc::new(catalog),
            base: None,
            _dir: dir,
            _home: None,
        }
    }

    pub async fn over_rest() -> Self {
        Self::over_rest_with(RestConfig::default()).await
    }

    /// Through the real server's gRPC service, with the catalog's own client.
    pub async fn over_grpc() -> Self {
        let (catalog, dir) = Self::catalog().await;
        let addr = lance_catalog::app::server::spawn(catalog, RestConfig::default())
            .await
            .expect("spawn server");
        let base = format!("http://{addr}");
        let client = lance_catalog::grpc::GrpcNamespace::connect(&base)
            .await
            .expect("connect over gRPC");
        Self {
            ns: Arc::new(client),
            base: Some(base),
            _dir: dir,
            _home: None,
        }
    }

    /// Data over the real server's Arrow Flight service, the rest over REST.
    pub async fn over_flight() -> Self {
        let mut env = Self::over_rest().await;
        let base = env.base.clone().expect("a served environment");
        let flight =
            crate::transport::flight_namespace::FlightNamespace::connect(&base, env.ns.clone())
                .await;
        env.ns = Arc::new(flight);
        env
    }

    pub async fn over_rest_with(config: RestConfig) -> Self {
        let (catalog, dir) = Self::catalog().await;
        let addr = lance_catalog::app::server::spawn(catalog, config)
            .await
            .expect("spawn server");
        let base = format!("http://{addr}");
        let client = RestNamespaceBuilder::new(base.clone()).build();
        Self {
            ns: Arc::new(client),
            base: Some(base),
            _dir: dir,
            _home: None,
        }
    }
}

/// A fresh root on the S3-compatible server named by
/// `LANCE_CATALOG_TEST_S3=http://HOST:PORT/BUCKET[/PREFIX]` (CI starts one),
/// with the storage options a user would set; `None` when it is not set.
pub fn s3_root() -> Option<StorageConfig> {
    let spec = std::env::var("LANCE_CATALOG_TEST_S3").ok()?;
    let (scheme, rest) = spec
        .split_once("://")
        .expect("LANCE_CATALOG_TEST_S3 is a URL");
    let (host, path) = rest
        .split_once('/')
        .expect("LANCE_CATALOG_TEST_S3 names a bucket");
    let path = path.trim_matches('/');
    let options = [
        ("aws_endpoint", format!("{scheme}://{host}")),
        ("aws_access_key_id", "test".into()),
        ("aws_secret_access_key", "test".into()),
        ("aws_region", "us-east-1".into()),
        ("allow_http", "true".into()),
    ];
    Some(StorageConfig {
        root: format!("s3://{path}/conformance-{}", uuid::Uuid::new_v4().simple()),
        storage_options: options
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        ..Default::default()
    })
}

/// Warehouses on: project `p` and warehouse `wh` on a root of its own,
/// beside the default warehouse's root. Answers the governance layer, the
/// warehouse's root and the default root.
pub async fn warehouses() -> (Arc<Governance>, TempDir, TempDir) {
    let wh = tempfile::tempdir().expect("tempdir");
    let root = StorageConfig {
        root: wh.path().to_string_lossy().into_owned(),
        ..Default::default()
    };
    let (gov, home) = warehouses_with(root).await;
    (gov, wh, home)
}

/// [`warehouses`] with warehouse `wh` at `root`.
pub async fn warehouses_with(root: StorageConfig) -> (Arc<Governance>, TempDir) {
    let home = tempfile::tempdir().expect("tempdir");
    let gov = Governance::open(&GovernanceConfig {
        storage: StorageConfig {
            root: home.path().to_string_lossy().into_owned(),
            ..Default::default()
        },
        control_root: None,
        warehouses: true,
        ..Default::default()
    })
    .await
    .expect("open governance");
    gov.create_project(
        &Call::default(),
        CreateProjectRequest {
            project_id: "p".into(),
            ..Default::default()
        },
    )
    .await
    .expect("project");
    gov.create_warehouse(
        &Call::default(),
        CreateWarehouseRequest {
            warehouse_id: "wh".into(),
            project_id: "p".into(),
            storage_options: (!root.storage_options.is_empty())
                .then(|| root.storage_options.into()),
            root: root.root,
            ..Default::default()
        },
    )
    .await
    .expect("warehouse");
    (Arc::new(gov), home)
}

impl Env {
    /// The spec over REST (Lance's own client) against a server whose root
    /// is on S3; `None` without `LANCE_CATALOG_TEST_S3`.
    pub async fn on_s3() -> Option<Self> {
        let config = s3_root()?;
        let catalog = Catalog::open(&config).await.expect("open an S3 root");
        let addr = lance_catalog::app::server::spawn(catalog, RestConfig::default())
            .await
            .expect("spawn server");
        let base = format!("http://{addr}");
        Some(Self {
            ns: Arc::new(RestNamespaceBuilder::new(base.clone()).build()),
            base: Some(base),
            _dir: tempfile::tempdir().expect("tempdir"),
            _home: None,
        })
    }

    /// Two warehouses, the default one on a local root and `wh` on S3:
    /// the spec over REST at `wh`'s URL. `None` without
    /// `LANCE_CATALOG_TEST_S3`.
    pub async fn warehouse_on_s3() -> Option<Self> {
        let (gov, home) = warehouses_with(s3_root()?).await;
        let addr = lance_catalog::app::server::spawn_governed(gov, RestConfig::default())
            .await
            .expect("spawn server");
        let base = format!("http://{addr}");
        let client = RestNamespaceBuilder::new(format!("{base}/warehouses/wh")).build();
        Some(Self {
            ns: Arc::new(client),
            base: Some(base),
            _dir: tempfile::tempdir().expect("tempdir"),
            _home: Some(home),
        })
    }

    /// The spec through warehouse `wh` with warehouses on, in process.
    pub async fn in_warehouse() -> Self {
        let (gov, wh, home) = warehouses().await;
        Self {
            ns: Arc::new(Scoped::new(gov, "wh")),
            base: None,
            _dir: wh,
            _home: Some(home),
        }
    }

    /// The spec through warehouse `wh` with warehouses on, over gRPC: the
    /// scope travels in each request's context.
    pub async fn warehouse_over_grpc() -> Self {
        let (gov, wh, home) = warehouses().await;
        let addr = lance_catalog::app::server::spawn_governed(gov, RestConfig::default())
            .await
            .expect("spawn server");
        let base = format!("http://{addr}");
        let client = lance_catalog::grpc::GrpcNamespace::connect(&base)
            .await
            .expect("connect over gRPC");
        Self {
            ns: Arc::new(Scoped::new(Arc::new(client), "wh")),
            base: Some(base),
            _dir: wh,
            _home: Some(home),
        }
    }

    /// The spec through warehouse `wh` with warehouses on, over REST: Lance's
    /// own client pointed at the warehouse's URL.
    pub async fn warehouse_over_rest() -> Self {
        let (gov, wh, home) = warehouses().await;
        let addr = lance_catalog::app::server::spawn_governed(gov, RestConfig::default())
            .await
            .expect("spawn server");
        let base = format!("http://{addr}");
        let client = RestNamespaceBuilder::new(format!("{base}/warehouses/wh")).build();
        Self {
            ns: Arc::new(client),
            base: Some(base),
            _dir: wh,
            _home: Some(home),
        }
    }
}

/// The spec code of a failed call, however it travelled.
pub fn code<T: std::fmt::Debug>(r: lance::Result<T>) -> u32 {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => CatalogError::from_lance(&e).code.0,
    }
}

pub fn ids(v: &[&str]) -> Option<Vec<String>> {
    Some(v.iter().map(|s| s.to_string()).collect())
}

pub fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("x", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
    ]))
}

/// Rows `start..start+n`.
pub fn batch(start: i64, n: usize) -> RecordBatch {
    let ids: Vec<i64> = (start..start + n as i64).collect();
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(Float64Array::from_iter_values(
                ids.iter().map(|i| *i as f64 * 0.5),
            )),
            Arc::new(StringArray::from_iter_values(
                ids.iter().map(|i| format!("s{i}")),
            )),
        ],
    )
    .unwrap()
}

/// Arrow IPC stream bytes of the batches (with the schema of `schema`).
pub fn ipc(schema: &Schema, batches: &[RecordBatch]) -> Bytes {
    let mut out = Vec::new();
    let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut out, schema).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    drop(w);
    Bytes::from(out)
}

pub fn rows(start: i64, n: usize) -> Bytes {
    ipc(&schema(), &[batch(start, n)])
}

/// `n` rows of an id and a 16-dimensional float vector, as an IPC stream.
pub fn vectors(n: usize) -> bytes::Bytes {
    use arrow_array::{FixedSizeListArray, Float32Array, Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    let item = std::sync::Arc::new(Field::new("item", DataType::Float32, true));
    let schema = std::sync::Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("v", DataType::FixedSizeList(item.clone(), 16), true),
    ]));
    let values: Vec<f32> = (0..n * 16)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0)
        .collect();
    let list = FixedSizeListArray::try_new(
        item,
        16,
        std::sync::Arc::new(Float32Array::from(values)),
        None,
    )
    .unwrap();
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            std::sync::Arc::new(Int64Array::from_iter_values(0..n as i64)),
            std::sync::Arc::new(list),
        ],
    )
    .unwrap();
    ipc(&schema, &[batch])
}

/// Decode an Arrow IPC file (the query answer).
pub fn read_file(bytes: &Bytes) -> Vec<RecordBatch> {
    let reader =
        arrow::ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes.to_vec()), None)
            .expect("an Arrow IPC file");
    reader.map(|b| b.unwrap()).collect()
}

/// Table `id` opened with Lance itself at the location describe answers.
pub async fn dataset(ns: &dyn LanceNamespace, id: &[&str]) -> lance::Dataset {
    let d = ns
        .describe_table(lance_namespace::models::DescribeTableRequest {
            id: ids(id),
            ..Default::default()
        })
        .await
        .unwrap();
    lance::Dataset::open(&d.location.unwrap()).await.unwrap()
}

/// Create namespace `id` (its parent must exist).
pub async fn namespace(ns: &dyn LanceNamespace, id: &[&str]) {
    ns.create_namespace(lance_namespace::models::CreateNamespaceRequest {
        id: ids(id),
        ..Default::default()
    })
    .await
    .unwrap();
}

/// Create table `id` from Arrow IPC stream bytes.
pub async fn create(
    ns: &dyn LanceNamespace,
    id: &[&str],
    data: Bytes,
) -> lance::Result<lance_namespace::models::CreateTableResponse> {
    ns.create_table(
        lance_namespace::models::CreateTableRequest {
            id: ids(id),
            ..Default::default()
        },
        data,
    )
    .await
}

/// The row count of table `id`.
pub async fn count(ns: &dyn LanceNamespace, id: &[&str]) -> i64 {
    count_where(ns, id, None).await
}

/// The number of rows of table `id` matching `predicate` (all without one).
pub async fn count_where(ns: &dyn LanceNamespace, id: &[&str], predicate: Option<&str>) -> i64 {
    ns.count_table_rows(lance_namespace::models::CountTableRowsRequest {
        id: ids(id),
        predicate: predicate.map(str::to_string),
        ..Default::default()
    })
    .await
    .unwrap()
}

/// Namespace `id[..-1]` and, in it, table `id` with rows `0..n`.
pub async fn table(ns: &dyn LanceNamespace, id: &[&str], n: usize) {
    namespace(ns, &id[..id.len() - 1]).await;
    create(ns, id, rows(0, n)).await.unwrap();
}

/// The HS256 secret of the governed test servers ([`serve_governed`]).
pub const SECRET: &str = "test-secret-of-at-least-32-bytes!!";

/// Seconds since the epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An HS256 token for `sub`, audience `lance`, valid for a minute unless
/// `claims` say else.
pub fn token(sub: &str, claims: serde_json::Value) -> String {
    let mut c = serde_json::json!({"sub": sub, "exp": now() + 60, "aud": "lance"});
    for (k, v) in claims.as_object().unwrap() {
        c[k] = v.clone();
    }
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &c,
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

/// Serve a catalog over `dir`'s root (`dir/data`) with `--auth required`,
/// `root` its admin, HS256 tokens of audience `lance` ([`token`]), and
/// whatever `change` sets; its base URL.
pub async fn serve_governed(
    dir: &std::path::Path,
    change: impl FnOnce(&mut GovernanceConfig),
) -> String {
    serve_governed_with(dir, change).await.0
}

/// [`serve_governed`], with the governance layer the server runs.
pub async fn serve_governed_with(
    dir: &std::path::Path,
    change: impl FnOnce(&mut GovernanceConfig),
) -> (String, Arc<Governance>) {
    use lance_catalog::auth::JwtConfig;
    use lance_catalog::governance::AuthConfig;
    let mut config = GovernanceConfig {
        storage: StorageConfig {
            root: dir.join("data").to_string_lossy().into_owned(),
            ..Default::default()
        },
        auth: AuthConfig {
            required: true,
            jwt: Some(JwtConfig {
                secret: Some(SECRET.into()),
                audience: Some("lance".into()),
                ..Default::default()
            }),
            bootstrap_admin: Some("root".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    change(&mut config);
    let gov = Arc::new(Governance::open(&config).await.unwrap());
    let addr = lance_catalog::app::server::spawn_governed(gov.clone(), RestConfig::default())
        .await
        .unwrap();
    (format!("http://{addr}"), gov)
}
