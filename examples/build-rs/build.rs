//! Generates the clientset, listers, informers, fake clientset and the `DeepCopy` /
//! `Resource` impls of `src/apis` into `$OUT_DIR/kubegen.rs` (included by `src/lib.rs`).
//! A marker error fails the build with `file:line: message`.

fn main() -> Result<(), kubegen_codegen::BuildError> {
    kubegen_codegen::Builder::new()
        .input_dir("src/apis")
        .input_module("crate::apis")
        .output_module("crate::client")
        .with_fake(true)
        .compile()?;
    Ok(())
}
