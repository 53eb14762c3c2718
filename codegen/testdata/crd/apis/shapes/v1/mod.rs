//! shapes.kubegen.dev/v1: one type per serde shape and controller-gen marker, for
//! `kubegen-codegen crd` (golden output in `codegen/testdata/crd/crds/`). `tests/crd.rs`
//! also compiles this file, so every shape here is what serde really reads and writes,
//! and `#[derive(kubegen::Schema)]` gives `Shape::crd()` / `Gauge::crd()` to compare with
//! the CLI's files.
//!
//! +groupName=shapes.kubegen.dev

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::core::v1::{PodTemplateSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};

/// A Shape exercises every serde shape the schema generator follows.
///
/// It has a second paragraph.
/// +genclient
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[resource(group = "shapes.kubegen.dev", version = "v1")]
pub struct Shape {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired shape.
    pub spec: ShapeSpec,
    /// What was observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ShapeStatus>,
}

/// Fields of every kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub struct ShapeSpec {
    /// Required: neither Option nor default.
    pub display_name: String,
    /// Renamed explicitly.
    #[serde(rename = "x-size")]
    pub size: i64,
    /// Optional by type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub small: Option<i32>,
    /// Optional by default.
    #[serde(default)]
    pub ratio: f64,
    /// A float.
    #[serde(default)]
    pub weight: f32,
    /// A flag.
    #[serde(default)]
    pub enabled: bool,
    /// Never read.
    #[serde(skip)]
    pub cache: Vec<u8>,
    /// A list.
    #[serde(default)]
    pub tags: Vec<String>,
    /// A sorted map.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// A hash map of lists.
    #[serde(default)]
    pub ports: HashMap<String, Vec<u16>>,
    /// Anything at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<serde_json::Value>,
    /// A unit-only enum.
    #[serde(default)]
    pub color: Color,
    /// Externally tagged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// Internally tagged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<Backend>,
    /// Adjacently tagged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// Untagged, integer or string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<PortRef>,
    /// Untagged, two objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// Flattened fields land beside the others.
    #[serde(flatten)]
    pub common: Common,
    /// A pod template, with Kubernetes' own schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<PodTemplateSpec>,
    /// Resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// A quantity is an integer or a string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Quantity>,
    /// So is an IntOrString.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// A timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<Time>,
    /// A selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// Colors.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    /// Red.
    #[default]
    Red,
    /// Dark green.
    DarkGreen,
    /// Not read.
    #[serde(skip)]
    Invisible,
}

/// Where content comes from (`{"git": {...}}` or `{"http": "..."}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    /// A git repository.
    Git {
        /// Its URL.
        url: String,
        /// A branch.
        #[serde(default)]
        branch: Option<String>,
    },
    /// A URL.
    Http(String),
}

/// A backend, tagged by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(tag = "kind")]
pub enum Backend {
    /// A service.
    Service {
        /// The service name.
        name: String,
        /// Its port.
        port: i32,
    },
    /// A bucket.
    Bucket {
        /// Its name.
        bucket: String,
        /// Its region.
        region: String,
    },
    /// Nothing.
    None,
}

/// An action with a `type` and `params`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(tag = "type", content = "params", rename_all = "snake_case")]
pub enum Action {
    /// Scale to a count.
    ScaleTo {
        /// The count.
        replicas: i32,
    },
    /// Restart after a delay.
    Restart {
        /// Seconds.
        delay_seconds: i64,
    },
    /// Nothing to do.
    Noop,
}

/// A port by number or name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(untagged)]
pub enum PortRef {
    /// A number.
    Number(i32),
    /// A name.
    Name(String),
}

/// A target by name or by labels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(untagged)]
pub enum Target {
    /// By name.
    Named {
        /// The name.
        name: String,
    },
    /// By labels.
    Labeled {
        /// The labels.
        labels: BTreeMap<String, String>,
        /// At most this many.
        #[serde(default)]
        limit: Option<i32>,
    },
}

/// Fields shared by several specs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub struct Common {
    /// Who owns it.
    pub owner_team: String,
    /// Priority.
    #[serde(default)]
    pub priority: Option<u32>,
}

/// Status of a Shape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub struct ShapeStatus {
    /// Conditions, by type.
    /// +listType=map
    /// +listMapKey=type
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The generation observed.
    #[serde(default)]
    pub observed_generation: i64,
}

/// A Gauge carries every controller-gen validation marker.
/// +genclient
/// +genclient:nonNamespaced
/// +kubebuilder:resource:scope=Cluster,shortName=ga;gg,categories=all;kubegen,singular=gauge
/// +kubebuilder:subresource:status
/// +kubebuilder:printcolumn:name="Level",type=integer,JSONPath=`.spec.level`
/// +kubebuilder:printcolumn:name="Unit",type=string,JSONPath=".spec.unit",description="The unit",priority=1
/// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
/// +kubebuilder:validation:XValidation:rule="self.metadata.name.startsWith('g')",message="names start with g"
/// +kubebuilder:metadata:annotations="shapes.kubegen.dev/owner=gauges team"
/// +kubebuilder:metadata:labels="app.kubernetes.io/part-of=kubegen"
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[resource(group = "shapes.kubegen.dev", version = "v1")]
pub struct Gauge {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The gauge.
    pub spec: GaugeSpec,
}

/// Every validation marker on a field of a fitting type.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub struct GaugeSpec {
    /// Between 1 and 10.
    /// +kubebuilder:validation:Minimum=1
    /// +kubebuilder:validation:Maximum=10
    pub level: i32,
    /// Above 0, below 1, in steps of 0.25.
    /// +kubebuilder:validation:Minimum=0
    /// +kubebuilder:validation:ExclusiveMinimum=true
    /// +kubebuilder:validation:Maximum=1
    /// +kubebuilder:validation:ExclusiveMaximum=true
    /// +kubebuilder:validation:MultipleOf=0.25
    /// +optional
    #[serde(default)]
    pub fraction: f64,
    /// A short lowercase unit.
    /// +kubebuilder:validation:MinLength=1
    /// +kubebuilder:validation:MaxLength=8
    /// +kubebuilder:validation:Pattern=`^[a-z]+$`
    pub unit: String,
    /// One of three modes.
    /// +kubebuilder:validation:Enum=Fast;Slow;"Off"
    /// +kubebuilder:default=Slow
    #[serde(default)]
    pub mode: Option<String>,
    /// An email address.
    /// +kubebuilder:validation:Format=email
    #[serde(default)]
    pub contact: Option<String>,
    /// One to three unique readings.
    /// +kubebuilder:validation:MinItems=1
    /// +kubebuilder:validation:MaxItems=3
    /// +kubebuilder:validation:UniqueItems=true
    /// +listType=atomic
    pub readings: Vec<i64>,
    /// Required although defaulted by serde.
    /// +kubebuilder:validation:Required
    #[serde(default)]
    pub owner: String,
    /// Optional although neither Option nor default.
    /// +kubebuilder:validation:Optional
    pub note: String,
    /// Defaults to 3.
    /// +kubebuilder:default=3
    #[serde(default)]
    pub retries: Option<i32>,
    /// At most two limits.
    /// +kubebuilder:validation:MinProperties=1
    /// +kubebuilder:validation:MaxProperties=2
    #[serde(default)]
    pub limits: BTreeMap<String, Quantity>,
    /// A window with a CEL rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
}

/// A time window (type-level markers apply wherever it is used).
/// +kubebuilder:validation:XValidation:rule="self.start <= self.end",message="start after end",reason=FieldValueInvalid,fieldPath=".start"
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
pub struct Window {
    /// Start minute.
    pub start: i32,
    /// End minute.
    pub end: i32,
}

/// A Dial has a scale subresource, a selectable field and the structural markers.
/// +genclient
/// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
/// +kubebuilder:selectablefield:JSONPath=`.spec.color`
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[resource(group = "shapes.kubegen.dev", version = "v1")]
pub struct Dial {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The dial.
    pub spec: DialSpec,
    /// What was observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<DialStatus>,
}

/// Structural markers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
pub struct DialSpec {
    /// Desired replicas.
    pub replicas: i32,
    /// A color to select on.
    #[serde(default)]
    pub color: String,
    /// Kept whole on apply.
    /// +mapType=atomic
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
    /// A number or a percentage, stored as text.
    /// +kubebuilder:validation:XIntOrString
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surge: Option<serde_json::Value>,
    /// A whole Kubernetes object.
    /// +kubebuilder:validation:EmbeddedResource
    /// +kubebuilder:pruning:PreserveUnknownFields
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<serde_json::Value>,
    /// Settings the server keeps as sent.
    /// +kubebuilder:pruning:PreserveUnknownFields
    #[serde(default)]
    pub extra: BTreeMap<String, String>,
    /// A value of a type with no schema, kept as sent.
    /// +kubebuilder:validation:Schemaless
    /// +kubebuilder:pruning:PreserveUnknownFields
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<Opaque>,
}

/// A type the generator cannot describe (no `kubegen::Schema`): only `Schemaless` fields
/// may hold it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Opaque(pub BTreeMap<String, serde_json::Value>);

/// Observed replicas and selector.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
pub struct DialStatus {
    /// Observed replicas.
    #[serde(default)]
    pub replicas: i32,
    /// The pods' selector.
    #[serde(default)]
    pub selector: String,
}

/// A Meter is served in v1 (stored), v1beta1 and v2: one CRD with three versions.
/// +genclient
/// +kubebuilder:storageversion
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Meter {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The reading.
    #[serde(default)]
    pub value: i64,
}

/// A Rollout holds the serde shapes whose schemas need CEL rules or have no structural
/// equivalent: unit and data variants mixed, tuples, tagged variants with fields of their
/// own.
/// +genclient
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[resource(group = "shapes.kubegen.dev", version = "v1")]
pub struct Rollout {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The rollout.
    pub spec: RolloutSpec,
}

/// One field per shape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutSpec {
    /// Unit and data variants, externally tagged.
    pub strategy: RolloutStrategy,
    /// A tuple.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<(String, i64)>,
    /// A tuple of one type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<(i32, i32)>,
    /// A tuple with an element that may be null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<(String, Option<i64>)>,
    /// Externally tagged data variants, tuple variants among them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<Weight>,
    /// Internally tagged, each variant with required fields of its own.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Adjacently tagged, each variant with required fields of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<Hook>,
    /// Untagged objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<Selector>,
    /// Untagged, a string or an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload>,
    /// A transparent newtype.
    #[serde(default)]
    pub owner: Owner,
}

/// How to roll out: serde writes `"recreate"` or `{"rollingUpdate": {...}}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub enum RolloutStrategy {
    /// All at once.
    #[default]
    Recreate,
    /// A few at a time.
    RollingUpdate {
        /// Extra pods.
        #[serde(default, skip_serializing_if = "Option::is_none", rename = "maxSurge")]
        max_surge: Option<i32>,
    },
    /// Steps of traffic.
    Canary(CanaryStrategy),
    /// A second deployment and its delay.
    BlueGreen(String, Option<i64>),
    /// Skipped.
    #[serde(skip)]
    Never,
}

/// Canary steps.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
pub struct CanaryStrategy {
    /// Weights.
    pub steps: Vec<i32>,
    /// Pause between steps.
    #[serde(default)]
    pub pause: bool,
}

/// A traffic weight.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub enum Weight {
    /// One value.
    Fixed(i32),
    /// From, to.
    Range(i32, i32),
    /// A service and its share.
    Split(String, i64),
}

/// A step, tagged by `action`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum Step {
    /// Set the weight.
    SetWeight {
        /// The weight.
        weight: i32,
    },
    /// Wait.
    #[serde(alias = "wait")]
    Pause {
        /// For how long.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration: Option<String>,
    },
    /// Run an analysis.
    Analyze {
        /// The template.
        template: String,
        /// Its arguments.
        #[serde(default, alias = "arguments")]
        args: Vec<String>,
    },
    /// Done.
    Promote,
}

/// A hook with a `kind` and its `with`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(tag = "kind", content = "with", rename_all = "kebab-case")]
pub enum Hook {
    /// Call a URL.
    CallUrl {
        /// The URL.
        url: String,
        /// Retries.
        #[serde(default)]
        retries: i32,
    },
    /// Run a job.
    Job {
        /// The image.
        image: String,
    },
    /// Nothing.
    Skip,
}

/// Pods by name or by labels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(untagged)]
pub enum Selector {
    /// By name.
    ByName {
        /// The name.
        name: String,
    },
    /// By labels.
    ByLabels {
        /// The labels.
        #[serde(rename = "matchLabels")]
        match_labels: BTreeMap<String, String>,
    },
}

/// An owner's name, written as a bare string.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(transparent)]
pub struct Owner {
    /// The name.
    pub name: String,
}

/// A payload as text or inline: serde writes a string or an object, which only an untyped
/// node accepts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(untagged)]
pub enum Payload {
    /// Text.
    Text(String),
    /// Inline data.
    Inline {
        /// The data.
        data: String,
    },
}
