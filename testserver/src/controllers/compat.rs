//! The shapes that differ between Kubernetes versions, read and written in one place so
//! the controllers compile with whichever k8s-openapi version feature the user's build
//! picks (this library picks none): from 1.37, k8s-openapi's `Deployment.spec` and
//! `ReplicaSet.spec` are required, their conditions' `type` and `status` optional, and an
//! EndpointSlice's `endpoints` optional; before, the other way round. Everything else the
//! controllers read is the same in every version they support.

use k8s_openapi::{
    api::{
        apps::v1::{
            Deployment, DeploymentCondition, DeploymentSpec, ReplicaSet, ReplicaSetCondition,
            ReplicaSetSpec,
        },
        discovery::v1::{Endpoint, EndpointSlice},
    },
    apimachinery::pkg::apis::meta::v1::Time,
};

/// A condition as the controllers build it, turned into either version's shape.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Condition {
    /// `type`.
    pub type_: String,
    /// `status`: `True`, `False` or `Unknown`.
    pub status: String,
    /// `reason`.
    pub reason: Option<String>,
    /// `message`.
    pub message: Option<String>,
    /// `lastTransitionTime`.
    pub last_transition_time: Option<Time>,
    /// `lastUpdateTime` (Deployments only).
    pub last_update_time: Option<Time>,
}

k8s_openapi::k8s_if_ge_1_37! {
    /// The slice's endpoints.
    pub(crate) fn slice_endpoints(slice: &EndpointSlice) -> &[Endpoint] {
        slice.endpoints.as_deref().unwrap_or_default()
    }

    /// Sets the slice's endpoints.
    pub(crate) fn set_slice_endpoints(slice: &mut EndpointSlice, endpoints: Vec<Endpoint>) {
        slice.endpoints = Some(endpoints);
    }

    /// The ReplicaSet's spec.
    pub(crate) fn rs_spec(rs: &ReplicaSet) -> Option<&ReplicaSetSpec> {
        Some(&rs.spec)
    }

    /// The ReplicaSet's spec, to fill in.
    pub(crate) fn rs_spec_mut(rs: &mut ReplicaSet) -> &mut ReplicaSetSpec {
        &mut rs.spec
    }

    /// The Deployment's spec.
    pub(crate) fn deployment_spec(d: &Deployment) -> Option<&DeploymentSpec> {
        Some(&d.spec)
    }

    /// The Deployment's spec, to fill in.
    pub(crate) fn deployment_spec_mut(d: &mut Deployment) -> &mut DeploymentSpec {
        &mut d.spec
    }

    impl From<&ReplicaSetCondition> for Condition {
        fn from(c: &ReplicaSetCondition) -> Self {
            Condition {
                type_: c.type_.clone().unwrap_or_default(),
                status: c.status.clone().unwrap_or_default(),
                reason: c.reason.clone(),
                message: c.message.clone(),
                last_transition_time: c.last_transition_time.clone(),
                last_update_time: None,
            }
        }
    }

    impl From<Condition> for ReplicaSetCondition {
        fn from(c: Condition) -> Self {
            ReplicaSetCondition {
                type_: Some(c.type_),
                status: Some(c.status),
                reason: c.reason,
                message: c.message,
                last_transition_time: c.last_transition_time,
            }
        }
    }

    impl From<&DeploymentCondition> for Condition {
        fn from(c: &DeploymentCondition) -> Self {
            Condition {
                type_: c.type_.clone().unwrap_or_default(),
                status: c.status.clone().unwrap_or_default(),
                reason: c.reason.clone(),
                message: c.message.clone(),
                last_transition_time: c.last_transition_time.clone(),
                last_update_time: c.last_update_time.clone(),
            }
        }
    }

    impl From<Condition> for DeploymentCondition {
        fn from(c: Condition) -> Self {
            DeploymentCondition {
                type_: Some(c.type_),
                status: Some(c.status),
                reason: c.reason,
                message: c.message,
                last_transition_time: c.last_transition_time,
                last_update_time: c.last_update_time,
            }
        }
    }
}

k8s_openapi::k8s_if_le_1_36! {
    /// The slice's endpoints.
    pub(crate) fn slice_endpoints(slice: &EndpointSlice) -> &[Endpoint] {
        &slice.endpoints
    }

    /// Sets the slice's endpoints.
    pub(crate) fn set_slice_endpoints(slice: &mut EndpointSlice, endpoints: Vec<Endpoint>) {
        slice.endpoints = endpoints;
    }

    /// The ReplicaSet's spec.
    pub(crate) fn rs_spec(rs: &ReplicaSet) -> Option<&ReplicaSetSpec> {
        rs.spec.as_ref()
    }

    /// The ReplicaSet's spec, to fill in.
    pub(crate) fn rs_spec_mut(rs: &mut ReplicaSet) -> &mut ReplicaSetSpec {
        rs.spec.get_or_insert_with(ReplicaSetSpec::default)
    }

    /// The Deployment's spec.
    pub(crate) fn deployment_spec(d: &Deployment) -> Option<&DeploymentSpec> {
        d.spec.as_ref()
    }

    /// The Deployment's spec, to fill in.
    pub(crate) fn deployment_spec_mut(d: &mut Deployment) -> &mut DeploymentSpec {
        d.spec.get_or_insert_with(DeploymentSpec::default)
    }

    impl From<&ReplicaSetCondition> for Condition {
        fn from(c: &ReplicaSetCondition) -> Self {
            Condition {
                type_: c.type_.clone(),
                status: c.status.clone(),
                reason: c.reason.clone(),
                message: c.message.clone(),
                last_transition_time: c.last_transition_time.clone(),
                last_update_time: None,
            }
        }
    }

    impl From<Condition> for ReplicaSetCondition {
        fn from(c: Condition) -> Self {
            ReplicaSetCondition {
                type_: c.type_,
                status: c.status,
                reason: c.reason,
                message: c.message,
                last_transition_time: c.last_transition_time,
            }
        }
    }

    impl From<&DeploymentCondition> for Condition {
        fn from(c: &DeploymentCondition) -> Self {
            Condition {
                type_: c.type_.clone(),
                status: c.status.clone(),
                reason: c.reason.clone(),
                message: c.message.clone(),
                last_transition_time: c.last_transition_time.clone(),
                last_update_time: c.last_update_time.clone(),
            }
        }
    }

    impl From<Condition> for DeploymentCondition {
        fn from(c: Condition) -> Self {
            DeploymentCondition {
                type_: c.type_,
                status: c.status,
                reason: c.reason,
                message: c.message,
                last_transition_time: c.last_transition_time,
                last_update_time: c.last_update_time,
            }
        }
    }
}
