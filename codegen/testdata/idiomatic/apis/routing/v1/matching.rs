use serde::{Deserialize, Serialize};

/// Which requests a route takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub struct Matcher {
    /// The expression a request must match.
    pub expr: MatchExpr,
    /// Compare case-sensitively.
    #[serde(default)]
    pub case_sensitive: bool,
}

/// A match expression: a path prefix, a header, or expressions combined.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, kubegen::Schema)]
#[serde(rename_all = "camelCase")]
pub enum MatchExpr {
    /// The path starts with this.
    Prefix(String),
    /// A header has this value.
    Header {
        /// The header's name.
        name: String,
        /// Its value.
        value: String,
    },
    /// Every one of these matches.
    All(Vec<MatchExpr>),
    /// This does not match.
    Not(Box<MatchExpr>),
}
