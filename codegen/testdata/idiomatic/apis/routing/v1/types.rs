use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap as Map;

use super::RouteMatcher;

/// Labels put on every backend.
pub type Labels = Map<String, String>;

/// Several of a thing, in order.
pub type Many<T> = Vec<T>;

/// A route from a host to its backends.
///
/// +genclient
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[resource(group = "routing.kubegen.dev", version = "v1")]
pub struct Route {
    /// Standard object metadata.
    pub metadata: metav1::ObjectMeta,
    /// What the route sends where.
    pub spec: RouteSpec,
}

/// Where a route sends requests.
///
/// +kubegen:maxDepth=2
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub struct RouteSpec {
    /// The host name matched.
    pub host: String,
    /// Labels for the backends.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub labels: Labels,
    /// The backends, tried in order.
    pub backends: Many<Backend>,
    /// Which requests the route takes (all when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<RouteMatcher>,
    /// Not used before this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<metav1::Time>,
    /// Where requests go when no backend answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Box<RouteSpec>>,
}

/// One backend.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
pub struct Backend {
    /// The Service's name.
    pub service: String,
    /// Its port.
    pub port: i32,
}
