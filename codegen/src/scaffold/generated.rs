//! Runs, over a project directory, exactly what the project's `hack/update-codegen.sh`
//! runs (same generators, same options), so a freshly scaffolded project passes its own
//! `hack/verify-codegen.sh`.

use std::path::Path;

use super::ScaffoldError;
use super::layout::{APIS_DIR, BOILERPLATE_FILE, CLIENT_DIR, CRD_DIR, ROLE_FILE, WEBHOOK_FILE};
use crate::generate::{Config, Generator};
use crate::plural::PluralExceptions;
use crate::rbac::DEFAULT_ROLE_NAME;

/// `update` (DeepCopy and Resource impls, clientset, listers, informers), `crd`,
/// `rbac` and `webhook` over the project at `root`.
pub fn update(root: &Path) -> Result<(), ScaffoldError> {
    let config = Config::new(root.join(APIS_DIR), root.join(CLIENT_DIR), "crate::client")
        .input_module("crate::apis")
        .boilerplate(root.join(BOILERPLATE_FILE));
    Generator::new(config)?.update()?;
    crate::crd::files::update(
        &root.join(APIS_DIR),
        &root.join(CRD_DIR),
        &PluralExceptions::default(),
    )?;
    crate::rbac::files::update(&root.join("src"), &root.join(ROLE_FILE), DEFAULT_ROLE_NAME)?;
    crate::webhook::files::update(&root.join("src"), &root.join(WEBHOOK_FILE))?;
    Ok(())
}
