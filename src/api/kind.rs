//! The kinds of object an access names.

use serde::Serialize;

/// What kind of object an access's id names: the entity its grants,
/// policies and audit events are about. Its name (`as_str`) is the one
/// grants and audit records store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The catalog itself (server-wide operations), and an access that
    /// names nothing else.
    #[default]
    Server,
    Project,
    Warehouse,
    Namespace,
    Table,
    /// A local user.
    User,
    ApiKey,
    /// A local user's session (a refused session token names it).
    Session,
    /// A maintenance task's key (a refused task key names it).
    Task,
}

impl Kind {
    /// The name grants, policies and audit records store.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Server => "server",
            Kind::Project => "project",
            Kind::Warehouse => "warehouse",
            Kind::Namespace => "namespace",
            Kind::Table => "table",
            Kind::User => "user",
            Kind::ApiKey => "api_key",
            Kind::Session => "session",
            Kind::Task => "task",
        }
    }

    /// A namespace or a table: an object of a warehouse's tree, with a
    /// real id of its own.
    pub fn in_tree(self) -> bool {
        matches!(self, Kind::Namespace | Kind::Table)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
