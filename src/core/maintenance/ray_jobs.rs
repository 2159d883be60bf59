//! A client of Ray's Jobs REST API on the dashboard address: submit a job
//! under a chosen `submission_id`, read its status and logs, stop it.
//! With Ray's token authentication (`RAY_AUTH_MODE=token`) every request
//! carries `Authorization: Bearer <token>`.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{CatalogError, CatalogResult, Code};

/// A job as `GET /api/jobs/{id}` shows it (the fields read here).
#[derive(Debug, Clone, Deserialize)]
pub(super) struct JobDetails {
    /// PENDING, RUNNING, STOPPED, SUCCEEDED or FAILED.
    pub status: String,
    #[serde(default)]
    pub message: Option<String>,
}

/// What a submit found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Submitted {
    New,
    /// A job under that id exists already: it is the one to follow.
    Exists,
}

pub(super) struct JobsApi {
    client: reqwest::Client,
    /// `http://host:port`, no trailing slash.
    base: String,
    token: Option<String>,
}

impl std::fmt::Debug for JobsApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobsApi")
            .field("base", &self.base)
            .field("token", &self.token.as_ref().map(|_| "(set)"))
            .finish()
    }
}

/// Ray answers errors as text, often a Python traceback: its last line
/// says what went wrong.
fn last_line(text: &str) -> String {
    let line = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no message)");
    line.chars().take(500).collect()
}

impl JobsApi {
    pub(super) fn new(base: &str, token: Option<String>) -> Result<Self, String> {
        let parsed = url::Url::parse(base)
            .map_err(|e| format!("--ray-address {base:?} is not a URL: {e}"))?;
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(
                "--ray-address must not carry credentials (they would be shown in task results); use --ray-token"
                    .to_string(),
            );
        }
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
            return Err(format!(
                "--ray-address {base:?} must be the Ray dashboard's http(s)://host:port"
            ));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(30))
            // The token goes to the address the operator named, nowhere else.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the Ray client: {e}"))?;
        Ok(Self {
            client,
            base: base.trim_end_matches('/').to_string(),
            token: token.filter(|t| !t.is_empty()),
        })
    }

    pub(super) fn base(&self) -> &str {
        &self.base
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let r = self.client.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    }

    fn unreachable(&self, e: reqwest::Error) -> CatalogError {
        CatalogError::new(
            Code::SERVICE_UNAVAILABLE,
            format!("the Ray cluster at {} did not answer", self.base),
        )
        .with_cause(e.without_url())
    }

    fn refused(&self, what: &str, status: reqwest::StatusCode, body: &str) -> CatalogError {
        // Ray's own trouble (an agent not up yet, its token): try later.
        let code = match status.as_u16() {
            401 | 403 | 500..=599 => Code::SERVICE_UNAVAILABLE,
            _ => Code::INTERNAL,
        };
        let hint = match status.as_u16() {
            401 | 403 => " (check --ray-token: the cluster uses token authentication)",
            _ => "",
        };
        CatalogError::new(
            code,
            format!(
                "the Ray cluster at {} refused to {what} ({status}{hint}): {}",
                self.base,
                last_line(body)
            ),
        )
    }

    /// One call: its status and body (an unreachable cluster is 17).
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> CatalogResult<(reqwest::StatusCode, String)> {
        let mut req = self.request(method, path);
        if let Some(body) = body {
            req = req.json(body);
        }
        let resp = req.send().await.map_err(|e| self.unreachable(e))?;
        let status = resp.status();
        Ok((status, resp.text().await.unwrap_or_default()))
    }

    /// Submit `body` (`entrypoint`, `submission_id`, `runtime_env`, …). A
    /// refusal is "already exists" when the job is there on a second look,
    /// whatever Ray's wording: the id is the task's, so it is this task's job.
    pub(super) async fn submit(
        &self,
        submission_id: &str,
        body: &Value,
    ) -> CatalogResult<Submitted> {
        let (status, text) = self
            .call(reqwest::Method::POST, "/api/jobs/", Some(body))
            .await?;
        if status.is_success() {
            return Ok(Submitted::New);
        }
        if status == reqwest::StatusCode::BAD_REQUEST && self.get(submission_id).await?.is_some() {
            return Ok(Submitted::Exists);
        }
        Err(self.refused("start a job", status, &text))
    }

    /// A job's details; `None` when the cluster has no job of that id.
    pub(super) async fn get(&self, submission_id: &str) -> CatalogResult<Option<JobDetails>> {
        let path = format!("/api/jobs/{submission_id}");
        let (status, text) = self.call(reqwest::Method::GET, &path, None).await?;
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(self.refused("describe a job", status, &text));
        }
        serde_json::from_str(&text).map(Some).map_err(|e| {
            CatalogError::internal(format!(
                "the Ray cluster's job description does not parse: {e}"
            ))
        })
    }

    /// A job's driver log.
    pub(super) async fn logs(&self, submission_id: &str) -> CatalogResult<String> {
        let path = format!("/api/jobs/{submission_id}/logs");
        let (status, text) = self.call(reqwest::Method::GET, &path, None).await?;
        if !status.is_success() {
            return Err(self.refused("read a job's logs", status, &text));
        }
        #[derive(Deserialize)]
        struct Logs {
            #[serde(default)]
            logs: String,
        }
        Ok(serde_json::from_str::<Logs>(&text)
            .map(|l| l.logs)
            .unwrap_or_default())
    }

    /// Stop a job (a job already ended, or unknown, is fine).
    pub(super) async fn stop(&self, submission_id: &str) -> CatalogResult<()> {
        let path = format!("/api/jobs/{submission_id}/stop");
        let (status, text) = self.call(reqwest::Method::POST, &path, None).await?;
        if status.is_success() || status == reqwest::StatusCode::NOT_FOUND {
            return Ok(());
        }
        Err(self.refused("stop a job", status, &text))
    }
}

#[cfg(test)]
#[path = "ray_jobs_tests.rs"]
mod api_tests;

#[cfg(test)]
mod tests {
    use super::last_line;

    #[test]
    fn a_traceback_is_told_by_its_last_line() {
        let tb = "Traceback (most recent call last):\n  File \"x\"\nValueError: Job with submission_id abc already exists.\n\n";
        assert_eq!(
            last_line(tb),
            "ValueError: Job with submission_id abc already exists."
        );
        assert_eq!(last_line(""), "(no message)");
    }
}
