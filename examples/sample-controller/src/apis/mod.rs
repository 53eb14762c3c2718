//! The API types of the sample controller, marked for `kubegen-codegen`
//! (`hack/update-codegen.sh` generates `src/client/` from them).

pub mod samplecontroller;
