//! Widget v1alpha1 ⇄ v1, the hub (the stored version, marked
//! `+kubebuilder:storageversion`): the conversion webhook (`+kubebuilder:webhook:conversion`
//! on the hub's Widget; the CRD calls `path: /convert`) converts between any two versions
//! through the hub with these impls (controller-runtime's hub and spoke).
//!
//! When this file was scaffolded the versions had the same fields, so a JSON round trip
//! converts them; when a field changes, map it here (and test both directions).

use super::Widget;
use crate::apis::example::v1 as hub;

impl TryFrom<Widget> for hub::Widget {
    type Error = serde_json::Error;

    fn try_from(spoke: Widget) -> Result<Self, Self::Error> {
        serde_json::from_value(serde_json::to_value(spoke)?)
    }
}

impl TryFrom<hub::Widget> for Widget {
    type Error = serde_json::Error;

    fn try_from(hub: hub::Widget) -> Result<Self, Self::Error> {
        serde_json::from_value(serde_json::to_value(hub)?)
    }
}
