//! A test API tree with every marker combination, for the golden-output tests and
//! `hack/verify-codegen.sh`. `zz_generated_*.rs` files are generated: regenerate them
//! with `hack/update-codegen.sh`.

pub mod samplecontroller;
pub mod widgets;
