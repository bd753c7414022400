//! Generates the protocol types from `firmware/proto/throttlescope.proto`
//! with protox (pure Rust), so no `protoc` is needed on the machine.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let proto_dir = manifest.join("../../../firmware/proto");
    let proto = proto_dir.join("throttlescope.proto");
    println!("cargo:rerun-if-changed={}", proto.display());
    let descriptors = protox::compile([&proto], [&proto_dir])
        .map_err(|e| format!("could not compile {}: {e}", proto.display()))?;
    prost_build::Config::new()
        // Serialize mirrors the proto field names (fixtures/protocol JSON).
        .type_attribute(".", "#[derive(serde::Serialize)]")
        .type_attribute(
            ".throttlescope.v1.ProbeToHost.msg",
            "#[serde(rename_all = \"snake_case\")]",
        )
        .type_attribute(
            ".throttlescope.v1.HostToProbe.cmd",
            "#[serde(rename_all = \"snake_case\")]",
        )
        .compile_fds(descriptors)?;
    Ok(())
}
