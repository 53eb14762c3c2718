//! [`ApplyParams`]: the options of a server-side apply.

use kube_core::params::PatchParams;

/// Options of a server-side apply (client-go's `metav1.ApplyOptions`).
///
/// ```
/// let params = kubegen::applyconfig::ApplyParams::new("my-controller").force();
/// assert!(params.force);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApplyParams {
    /// The field manager: who owns the fields this apply sets (required by the server).
    pub field_manager: String,
    /// Take over fields another manager owns instead of failing with 409 Conflict.
    pub force: bool,
    /// Validate and answer without persisting (`dryRun=All`).
    pub dry_run: bool,
}

impl ApplyParams {
    /// Applies as `field_manager`, not forcing.
    pub fn new(field_manager: impl Into<String>) -> Self {
        Self {
            field_manager: field_manager.into(),
            ..Self::default()
        }
    }

    /// Takes over conflicting fields (`force=true`).
    #[must_use]
    pub fn force(mut self) -> Self {
        self.force = true;
        self
    }

    /// Does not persist (`dryRun=All`).
    #[must_use]
    pub fn dry_run(mut self) -> Self {
        self.dry_run = true;
        self
    }

    /// The patch parameters of the request.
    pub fn patch_params(&self) -> PatchParams {
        let mut pp = PatchParams::apply(&self.field_manager);
        pp.force = self.force;
        pp.dry_run = self.dry_run;
        pp
    }
}
