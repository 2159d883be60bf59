//! Storage: roots other than a local directory (`roots`), what the
//! catalog leaves on storage (`ownership`), the orphan scan against legacy
//! aliases (`orphans`), and maintenance tasks.

mod maintenance;
mod orphans;
mod ownership;
mod roots;

use lance_namespace::models::RegisterTableRequest;
use lance_namespace::LanceNamespace;
use lance_namespace_impls::DirectoryNamespaceBuilder;

use crate::harness::{create, ids, rows};

/// Create table `id` with five rows; answer its directory under the root.
async fn created_dir(catalog: &dyn LanceNamespace, id: &[&str]) -> String {
    let created = create(catalog, id, rows(0, 5)).await.unwrap();
    created
        .location
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string()
}

/// Record `(name, location)` tables in namespace `h` as a catalog without
/// the location rules did (Lance's own directory namespace accepts any).
async fn register_legacy(root: &std::path::Path, tables: &[(&str, &str)]) {
    let engine = DirectoryNamespaceBuilder::new(root.to_string_lossy().into_owned())
        .dir_listing_enabled(false)
        .build()
        .await
        .unwrap();
    for (name, location) in tables {
        engine
            .register_table(RegisterTableRequest {
                id: ids(&["h", name]),
                location: location.to_string(),
                ..Default::default()
            })
            .await
            .unwrap();
    }
}
