//! The paths controller-runtime's builder (and controller-gen's markers) give webhooks.

use kube_core::Resource;

/// The conventional path of a conversion webhook.
pub const CONVERT_PATH: &str = "/convert";

fn gvk_path<K: Resource<DynamicType = ()>>(prefix: &str) -> String {
    format!(
        "/{prefix}-{}-{}-{}",
        K::group(&()).replace('.', "-"),
        K::version(&()),
        K::kind(&()).to_lowercase()
    )
}

/// `/validate-<group with dots as dashes>-<version>-<lowercase kind>`, the path
/// controller-runtime serves a validator of `K` on.
pub fn validate_path<K: Resource<DynamicType = ()>>() -> String {
    gvk_path::<K>("validate")
}

/// `/mutate-<group with dots as dashes>-<version>-<lowercase kind>`, the path
/// controller-runtime serves a defaulter of `K` on.
pub fn mutate_path<K: Resource<DynamicType = ()>>() -> String {
    gvk_path::<K>("mutate")
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::{apps::v1::Deployment, core::v1::ConfigMap};

    use super::*;

    #[test]
    fn paths_follow_controller_runtime() {
        assert_eq!(
            validate_path::<Deployment>(),
            "/validate-apps-v1-deployment"
        );
        assert_eq!(mutate_path::<ConfigMap>(), "/mutate--v1-configmap");
    }
}
