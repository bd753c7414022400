//! Compiles the firmware core's USB PD decoder (`firmware/core/src/pd_decode.c`, the file
//! the probe runs) and a layout probe (`csrc/layout.c`) into a static library.
//!
//! Where the target has no working C compiler (CI lints the Apple targets from Linux, with
//! no Apple SDK), the build goes on without it: the crate gets `cfg(no_pd_core)` and the
//! reason in `HOSTD_PD_CORE_MISSING`, and its decoder says it was not built.

use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_pd_core)");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let core = manifest.join("../../../firmware/core");
    let source = core.join("src/pd_decode.c");
    let header = core.join("include/throttlescope/pd_decode.h");
    let layout = manifest.join("csrc/layout.c");
    for path in [&source, &header, &layout] {
        println!("cargo::rerun-if-changed={}", path.display());
    }
    let result = cc::Build::new()
        .file(&source)
        .file(&layout)
        .include(core.join("include"))
        .try_compile("throttlescope_pd");
    if let Err(err) = result {
        let target = std::env::var("TARGET").unwrap_or_default();
        // The kind only (`ToolExecError`, `ToolNotFound`): cc's message holds the whole
        // command line, and it has printed the compiler's own complaint above.
        let message = err.to_string();
        let kind = message.split(':').next().unwrap_or("").trim();
        let reason = format!("no working C compiler for {target} ({kind})");
        println!("cargo::warning=USB PD decoder not compiled: {reason}");
        println!("cargo::rustc-cfg=no_pd_core");
        println!("cargo::rustc-env=HOSTD_PD_CORE_MISSING={reason}");
    }
}
