//! CronTab and CronClass.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// A CronTab runs an image on a cron schedule.
///
/// +genclient
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CronTab {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What to run when.
    #[serde(default)]
    pub spec: CronTabSpec,
    /// What the controller observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CronTabStatus>,
}

/// The desired schedule.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronTabSpec {
    /// The cron schedule (`* * * * */5`).
    #[serde(default)]
    pub cron_spec: String,
    /// The image to run.
    #[serde(default)]
    pub image: String,
    /// How many copies run at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// The CronClass it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_name: Option<String>,
}

/// The observed state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronTabStatus {
    /// How many times it ran.
    #[serde(default)]
    pub runs: i64,
}

/// A CronClass sets defaults for the CronTabs naming it (cluster-scoped, no status).
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CronClass {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The defaults.
    #[serde(default)]
    pub spec: CronClassSpec,
}

/// CronClass defaults.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronClassSpec {
    /// The time zone schedules are read in (`Etc/UTC`).
    #[serde(default)]
    pub time_zone: String,
}
