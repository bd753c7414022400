//! Small blocking calls to the InfluxDB v2 HTTP API: health, onboarding, buckets, the
//! DBRP mapping (for InfluxQL) and queries. Used by `hostd influx setup`, `hostd import`
//! and the test harness. Call from a plain thread, not from inside an async runtime.

use crate::Token;
use anyhow::{anyhow, bail, Context as _};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// IDs of an organisation and one of its buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketIds {
    /// Organisation ID.
    pub org_id: String,
    /// Bucket ID.
    pub bucket_id: String,
}

/// A small InfluxDB API client bound to a base URL and (optionally) a token.
#[derive(Debug, Clone)]
pub struct Api {
    base: String,
    token: Option<Token>,
    http: reqwest::blocking::Client,
}

impl Api {
    /// A client for `base` (e.g. `http://127.0.0.1:8086`).
    pub fn new(base: &str, token: Option<Token>) -> anyhow::Result<Api> {
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(30))
            .connect_timeout(Duration::from_secs(2))
            .build()
            .context("cannot build HTTP client")?;
        Ok(Api {
            base: base.trim_end_matches('/').to_owned(),
            token,
            http,
        })
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Replaces the token.
    pub fn set_token(&mut self, token: Token) {
        self.token = Some(token);
    }

    fn req(&self, method: reqwest::Method, path: &str) -> reqwest::blocking::RequestBuilder {
        let r = self.http.request(method, format!("{}{}", self.base, path));
        match &self.token {
            Some(t) => r.header("Authorization", t.header_value()),
            None => r,
        }
    }

    fn json(&self, rb: reqwest::blocking::RequestBuilder, what: &str) -> anyhow::Result<Value> {
        let resp = rb
            .send()
            .with_context(|| format!("{what}: InfluxDB at {} unreachable", self.base))?;
        let status = resp.status();
        let text = resp.text().unwrap_or_default();
        if !status.is_success() {
            let msg = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["message"].as_str().map(str::to_owned))
                .unwrap_or(text);
            bail!("{what}: InfluxDB answered {status}: {msg}");
        }
        if text.trim().is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text).with_context(|| format!("{what}: response is not JSON"))
    }

    /// True when `/health` answers 200.
    pub fn healthy(&self) -> bool {
        self.http
            .get(format!("{}/health", self.base))
            .timeout(Duration::from_secs(2))
            .send()
            .map(|r| r.status().is_success())
            .unwrap_or(false)
    }

    /// Waits until `/health` answers 200.
    pub fn wait_healthy(&self, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.healthy() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        bail!("InfluxDB at {} not healthy after {timeout:?}", self.base)
    }

    /// True when the server has not been onboarded yet.
    pub fn setup_allowed(&self) -> anyhow::Result<bool> {
        let v = self.json(
            self.req(reqwest::Method::GET, "/api/v2/setup"),
            "onboarding check",
        )?;
        Ok(v["allowed"].as_bool().unwrap_or(false))
    }

    /// Onboards a fresh server (first user, organisation, bucket); returns the operator
    /// token the server issued and the IDs. The token is kept for later calls.
    pub fn onboard(
        &mut self,
        username: &str,
        password: &str,
        org: &str,
        bucket: &str,
    ) -> anyhow::Result<(Token, BucketIds)> {
        let body = json!({
            "username": username,
            "password": password,
            "org": org,
            "bucket": bucket,
            "retentionPeriodSeconds": 0,
        });
        let v = self.json(
            self.req(reqwest::Method::POST, "/api/v2/setup").json(&body),
            "onboarding",
        )?;
        let token = v["auth"]["token"]
            .as_str()
            .ok_or_else(|| anyhow!("onboarding: no token in the answer"))?;
        let ids = BucketIds {
            org_id: str_field(&v["org"], "id", "onboarding")?,
            bucket_id: str_field(&v["bucket"], "id", "onboarding")?,
        };
        let token = Token::new(token);
        self.token = Some(token.clone());
        Ok((token, ids))
    }

    /// The organisation's ID.
    pub fn org_id(&self, org: &str) -> anyhow::Result<String> {
        let v = self.json(
            self.req(reqwest::Method::GET, "/api/v2/orgs")
                .query(&[("org", org)]),
            "organisation lookup",
        )?;
        v["orgs"]
            .as_array()
            .and_then(|a| a.iter().find(|o| o["name"] == org))
            .and_then(|o| o["id"].as_str())
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("InfluxDB has no organisation '{org}'"))
    }

    /// Finds the bucket, creating it (infinite retention) when `create` and it is absent.
    pub fn bucket(&self, org: &str, bucket: &str, create: bool) -> anyhow::Result<BucketIds> {
        let org_id = self.org_id(org)?;
        // InfluxDB answers 404 (not an empty list) when no bucket has the name.
        let resp = self
            .req(reqwest::Method::GET, "/api/v2/buckets")
            .query(&[("orgID", org_id.as_str()), ("name", bucket)])
            .send()
            .with_context(|| format!("bucket lookup: InfluxDB at {} unreachable", self.base))?;
        let v = if resp.status() == reqwest::StatusCode::NOT_FOUND {
            Value::Null
        } else {
            let status = resp.status();
            let text = resp.text().unwrap_or_default();
            if !status.is_success() {
                bail!("bucket lookup: InfluxDB answered {status}: {text}");
            }
            serde_json::from_str(&text).context("bucket lookup: response is not JSON")?
        };
        if let Some(id) = v["buckets"]
            .as_array()
            .and_then(|a| a.iter().find(|b| b["name"] == bucket))
            .and_then(|b| b["id"].as_str())
        {
            return Ok(BucketIds {
                org_id,
                bucket_id: id.to_owned(),
            });
        }
        if !create {
            bail!("InfluxDB has no bucket '{bucket}' in organisation '{org}'");
        }
        let v = self.json(
            self.req(reqwest::Method::POST, "/api/v2/buckets")
                .json(&json!({
                    "orgID": org_id, "name": bucket, "retentionRules": []
                })),
            "bucket creation",
        )?;
        Ok(BucketIds {
            org_id,
            bucket_id: str_field(&v, "id", "bucket creation")?,
        })
    }

    /// Makes `database`/`autogen` (InfluxQL) map to the bucket, as the default retention
    /// policy; does nothing when such a mapping exists.
    pub fn ensure_dbrp(&self, ids: &BucketIds, database: &str) -> anyhow::Result<()> {
        let v = self.json(
            self.req(reqwest::Method::GET, "/api/v2/dbrps")
                .query(&[("orgID", ids.org_id.as_str()), ("db", database)]),
            "DBRP lookup",
        )?;
        let exists = v["content"].as_array().is_some_and(|a| {
            a.iter().any(|m| {
                m["bucketID"] == ids.bucket_id.as_str() && m["retention_policy"] == "autogen"
            })
        });
        if exists {
            return Ok(());
        }
        self.json(
            self.req(reqwest::Method::POST, "/api/v2/dbrps")
                .json(&json!({
                    "bucketID": ids.bucket_id,
                    "orgID": ids.org_id,
                    "database": database,
                    "retention_policy": "autogen",
                    "default": true,
                })),
            "DBRP mapping",
        )?;
        Ok(())
    }

    /// Runs an InfluxQL query (`GET /query?db=…`) and returns the JSON answer. A query
    /// error reported inside the answer is turned into an `Err`.
    pub fn influxql(&self, database: &str, query: &str) -> anyhow::Result<Value> {
        let v = self.json(
            self.req(reqwest::Method::GET, "/query").query(&[
                ("db", database),
                ("q", query),
                ("epoch", "ns"),
            ]),
            "InfluxQL query",
        )?;
        if let Some(e) = v["results"]
            .as_array()
            .and_then(|r| r.iter().find_map(|x| x["error"].as_str()))
        {
            bail!("InfluxQL query {query:?} failed: {e}");
        }
        Ok(v)
    }

    /// Runs a Flux query (`POST /api/v2/query`) and returns the annotated CSV answer.
    pub fn flux(&self, org: &str, query: &str) -> anyhow::Result<String> {
        let resp = self
            .req(reqwest::Method::POST, "/api/v2/query")
            .query(&[("org", org)])
            .header("Content-Type", "application/vnd.flux")
            .header("Accept", "application/csv")
            .body(query.to_owned())
            .send()
            .with_context(|| format!("Flux query: InfluxDB at {} unreachable", self.base))?;
        let status = resp.status();
        let text = resp.text().unwrap_or_default();
        if !status.is_success() {
            bail!("Flux query failed ({status}): {text}");
        }
        Ok(text)
    }
}

fn str_field(v: &Value, key: &str, what: &str) -> anyhow::Result<String> {
    v[key]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("{what}: no '{key}' in the answer"))
}

/// The rows of the first series of an InfluxQL answer (each row as its values).
pub fn influxql_rows(answer: &Value) -> Vec<Vec<Value>> {
    answer["results"][0]["series"][0]["values"]
        .as_array()
        .map(|rows| rows.iter().filter_map(|r| r.as_array().cloned()).collect())
        .unwrap_or_default()
}

/// What `hostd influx setup` did.
#[derive(Debug, Clone)]
pub struct SetupOutcome {
    /// True when this call onboarded the server (false: it was already set up).
    pub onboarded: bool,
    /// Organisation and bucket IDs.
    pub ids: BucketIds,
    /// Where the token is.
    pub token_file: PathBuf,
}

/// Onboards a fresh server at `url` (user `username`, organisation `org`, bucket `bucket`),
/// writes the issued token to `token_file` (mode 0600; the generated password beside it
/// as `<token_file>.password`), and maps InfluxQL database `bucket`/autogen to the bucket.
/// Idempotent: on a server already onboarded it uses the token from `token_file` (or
/// `INFLUX_TOKEN`), creates the bucket if missing and ensures the mapping.
pub fn setup(
    url: &str,
    org: &str,
    bucket: &str,
    username: &str,
    token_file: &Path,
) -> anyhow::Result<SetupOutcome> {
    let mut api = Api::new(url, None)?;
    api.wait_healthy(Duration::from_secs(10)).with_context(|| {
        format!("is influxd running at {url}? (`just influx-up` starts a local one)")
    })?;
    if let Some(parent) = token_file.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let onboarded = api.setup_allowed()?;
    let ids = if onboarded {
        // Never overwrite a file we did not write: check before the server hands out the
        // one operator token (it cannot be fetched again).
        let pw_file = PathBuf::from(format!("{}.password", token_file.display()));
        for f in [token_file, pw_file.as_path()] {
            if f.exists() {
                bail!(
                    "{} already exists; move it away or choose another --influx-token-file \
                     (nothing was changed on the server)",
                    f.display()
                );
            }
        }
        let password = random_hex(16)?;
        let (token, ids) = api.onboard(username, &password, org, bucket)?;
        crate::token::write_secret_new(token_file, token.expose())?;
        crate::token::write_secret_new(&pw_file, &password)?;
        ids
    } else {
        let file = token_file.is_file().then_some(token_file);
        let token = Token::resolve(file).with_context(|| {
            format!("InfluxDB at {url} is already onboarded; hostd needs its token")
        })?;
        api.set_token(token);
        api.bucket(org, bucket, true)?
    };
    api.ensure_dbrp(&ids, bucket)?;
    Ok(SetupOutcome {
        onboarded,
        ids,
        token_file: token_file.to_owned(),
    })
}

fn random_hex(bytes: usize) -> anyhow::Result<String> {
    use std::io::Read as _;
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .context("cannot read /dev/urandom")?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// The default cache directory: `$THROTTLESCOPE_CACHE` or `~/.cache/throttlescope`.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("THROTTLESCOPE_CACHE") {
        Some(c) => PathBuf::from(c),
        None => {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/throttlescope")
        }
    }
}

/// Where `hostd influx setup` keeps the local server's token by default.
pub fn default_token_file() -> PathBuf {
    cache_dir().join("influxd/token")
}
