//! Settings from a TOML file (`--config`), below flags and environment
//! variables: flag > environment > file > default. The file's keys are the
//! flags' own names, so every setting has one name, one type and one
//! parser (clap's), whichever way it is given.

use std::collections::BTreeSet;
use std::ffi::OsString;

use clap::parser::ValueSource;
use clap::{Args, CommandFactory, FromArgMatches, Parser};
use serde_json::{Map, Value};

use crate::app::config::ServeArgs;

#[derive(Parser)]
#[command(name = "lance-catalog")]
struct Serve {
    #[command(flatten)]
    args: ServeArgs,
}

/// The settings in effect, and where each came from.
#[derive(Debug)]
pub struct Resolved {
    pub args: ServeArgs,
    /// Every setting's value (secrets redacted) and source, for the log.
    pub effective: Value,
}

/// Parse `argv` (the arguments after the subcommand) with the environment
/// and, when `--config` names one, the file.
pub fn resolve(argv: &[OsString]) -> Result<Resolved, clap::Error> {
    let cmd = || Serve::command().name("lance-catalog");
    let full = |extra: &[OsString]| {
        std::iter::once(OsString::from("lance-catalog"))
            .chain(argv.iter().cloned())
            .chain(extra.iter().cloned())
            .collect::<Vec<_>>()
    };
    let first = cmd().try_get_matches_from(full(&[]))?;
    let args = ServeArgs::from_arg_matches(&first)?;
    let mut from_file = BTreeSet::new();
    let matches = match &args.serving.config {
        None => first,
        Some(path) => {
            let extra = file_flags(path, &first, &mut from_file)
                .map_err(|e| cmd().error(clap::error::ErrorKind::InvalidValue, e))?;
            cmd().try_get_matches_from(full(&extra))?
        }
    };
    let args = ServeArgs::from_arg_matches(&matches)?;
    let effective = effective(&matches, &from_file);
    Ok(Resolved { args, effective })
}

/// The file's settings as flags, for those the command line and the
/// environment left unset.
fn file_flags(
    path: &std::path::Path,
    matches: &clap::ArgMatches,
    from_file: &mut BTreeSet<String>,
) -> Result<Vec<OsString>, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the config file {shown}: {e}"))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e| format!("the config file {shown} is not valid TOML: {e}"))?;
    let serve = ServeArgs::augment_args(clap::Command::new("x"));
    let mut out = Vec::new();
    for (key, value) in table {
        let id = key.replace('-', "_");
        let arg = serve
            .get_arguments()
            .find(|a| a.get_id().as_str() == id && id != "config")
            .ok_or_else(|| {
                format!(
                    "the config file {shown} has an unknown key `{key}`; keys are the flags' names with `_`, e.g. `root`, `control_root`, `storage_options`"
                )
            })?;
        if matches!(
            matches.value_source(&id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        ) {
            continue;
        }
        let long = arg.get_long().unwrap_or(id.as_str());
        let is_switch = matches!(arg.get_action(), clap::ArgAction::SetTrue);
        let values = match value {
            toml::Value::Array(items) => items,
            v => vec![v],
        };
        for v in values {
            let text = match (v, is_switch) {
                (toml::Value::Boolean(b), true) => {
                    if b {
                        out.push(OsString::from(format!("--{long}")));
                    }
                    continue;
                }
                (_, true) => return Err(format!("`{key}` in {shown} must be true or false")),
                (toml::Value::String(s), _) => s,
                (toml::Value::Integer(i), _) => i.to_string(),
                (toml::Value::Float(f), _) => f.to_string(),
                (toml::Value::Boolean(b), _) => b.to_string(),
                (other, _) => {
                    return Err(format!(
                        "`{key}` in {shown} must be a string, a number, a boolean or a list of them, not {}",
                        other.type_str()
                    ))
                }
            };
            out.push(OsString::from(format!("--{long}={text}")));
        }
        from_file.insert(id);
    }
    Ok(out)
}

/// Every setting with its value and source (`flag`, `env`, `file`,
/// `default`), secrets redacted.
fn effective(matches: &clap::ArgMatches, from_file: &BTreeSet<String>) -> Value {
    let mut out = Map::new();
    let serve = ServeArgs::augment_args(clap::Command::new("x"));
    for arg in serve.get_arguments() {
        let id = arg.get_id().as_str();
        let Some(raw) = matches.get_raw(id) else {
            continue;
        };
        let values: Vec<String> = raw.map(|v| v.to_string_lossy().into_owned()).collect();
        // A secret is marked where it is defined (`hide_env_values`), the
        // mark the reference page and `--help` read too.
        let secret = arg.is_hide_env_values_set();
        let redacted: Vec<Value> = values
            .into_iter()
            .map(|v| {
                if secret {
                    return Value::from("<redacted>");
                }
                match v.split_once('=') {
                    Some((k, _)) if id == "storage_options" && crate::core::is_secret(k) => {
                        Value::from(format!("{k}=<redacted>"))
                    }
                    _ => Value::from(v),
                }
            })
            .collect();
        let source = match matches.value_source(id) {
            _ if from_file.contains(id) => "file",
            Some(ValueSource::CommandLine) => "flag",
            Some(ValueSource::EnvVariable) => "env",
            _ => "default",
        };
        let value = match arg.get_action() {
            clap::ArgAction::Append => Value::Array(redacted),
            _ => redacted.into_iter().next().unwrap_or_default(),
        };
        out.insert(
            id.to_string(),
            serde_json::json!({"value": value, "source": source}),
        );
    }
    Value::Object(out)
}
