//! Compile the gRPC contract (proto/lance_catalog.proto) with tonic/prost,
//! and rebuild when the embedded web console (console/) changes.
//! The generated code lives in OUT_DIR and is never committed; the file
//! descriptor set is kept too, for server reflection and for the
//! proto <-> spec-model conversion.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    println!("cargo:rerun-if-changed=proto/lance_catalog.proto");
    // The web console's files are embedded (src/rest/console.rs).
    println!("cargo:rerun-if-changed=console");
    tonic_prost_build::configure()
        .file_descriptor_set_path(out.join("lance_catalog_descriptor.bin"))
        .compile_protos(&["proto/lance_catalog.proto"], &["proto"])?;
    Ok(())
}
