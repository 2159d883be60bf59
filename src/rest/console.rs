//! The web console at `/console/`: plain ES modules and one vendored
//! library (`console/`), embedded in the binary, calling only the REST
//! routes with the user's own credential, so every grant, policy,
//! protection flag and audit event applies unchanged. The files hold no
//! data and need no credential. Every answer carries a strict
//! Content-Security-Policy (scripts and styles from this origin only, no
//! inline code, no framing), `nosniff`, and an ETag: browsers revalidate
//! (`no-cache`) and get 304 while the binary's files are unchanged.

use std::collections::HashMap;
use std::sync::OnceLock;

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use include_dir::{include_dir, Dir};

/// The console's files, in the binary (`build.rs` rebuilds when they change).
static FILES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/console");

/// What the console's pages may load and call: this origin only. Trusted
/// Types make the browser refuse any string written as markup (the console
/// never does; Preact does only for `dangerouslySetInnerHTML`, unused).
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; \
    form-action 'self'; frame-ancestors 'none'; require-trusted-types-for 'script'";

pub(super) fn routes() -> Router {
    Router::new()
        // Relative, so it lands under a `--prefix` too.
        .route("/console", get(|| async { redirect("console/") }))
        .route("/console/", get(index))
        .route("/console/{*path}", get(asset))
}

fn redirect(to: &'static str) -> Response {
    let mut r = StatusCode::MOVED_PERMANENTLY.into_response();
    r.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static(to));
    guarded(r)
}

/// Each file's ETag (its SHA-256), the page as rendered with the server's
/// version in its footer.
struct Served {
    page: Vec<u8>,
    etags: HashMap<&'static str, String>,
}

fn served() -> &'static Served {
    static SERVED: OnceLock<Served> = OnceLock::new();
    SERVED.get_or_init(|| {
        let mut etags = HashMap::new();
        let mut stack = vec![&FILES];
        while let Some(dir) = stack.pop() {
            for f in dir.files() {
                if let Some(path) = f.path().to_str() {
                    etags.insert(path, etag(f.contents()));
                }
            }
            stack.extend(dir.dirs());
        }
        let raw = FILES
            .get_file("index.html")
            .map(|f| String::from_utf8_lossy(f.contents()).into_owned())
            .unwrap_or_default();
        let page = raw
            .replace("{{version}}", env!("CARGO_PKG_VERSION"))
            .into_bytes();
        etags.insert("index.html", etag(&page));
        Served { page, etags }
    })
}

fn etag(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

async fn index(headers: HeaderMap) -> Response {
    let s = served();
    answer(&headers, "index.html", s.page.clone())
}

async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    if path == "index.html" {
        return index(headers).await;
    }
    match FILES.get_file(&path) {
        Some(file) => answer(&headers, &path, file.contents().to_vec()),
        None => guarded((StatusCode::NOT_FOUND, "no such console file").into_response()),
    }
}

fn answer(headers: &HeaderMap, path: &str, body: Vec<u8>) -> Response {
    let etag = served().etags.get(path).map(String::as_str).unwrap_or("");
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .map(|t| t.trim().trim_start_matches("W/"))
                .any(|t| t == etag || t == "*")
        });
    let mut r = match unchanged {
        true => StatusCode::NOT_MODIFIED.into_response(),
        false => ([(header::CONTENT_TYPE, content_type(path))], body).into_response(),
    };
    if let Ok(v) = HeaderValue::from_str(etag) {
        r.headers_mut().insert(header::ETAG, v);
    }
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    guarded(r)
}

/// The headers every console answer carries.
fn guarded(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("html") => "text/html; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "text/plain; charset=utf-8",
    }
}
