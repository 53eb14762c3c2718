//! [`EventType`]: the two event types core/v1 Events have (client-go's `v1.EventTypeNormal`
//! and `v1.EventTypeWarning`, checked by `util.ValidateEventType`).

use std::{fmt, str::FromStr};

use super::error::RecordError;

/// The type of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Information: nothing is wrong.
    Normal,
    /// Something may be wrong.
    Warning,
}

impl EventType {
    /// `"Normal"` or `"Warning"`, as written in the Event.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EventType {
    type Err = RecordError;

    /// Accepts exactly `Normal` and `Warning` (case-sensitive, as the API server does).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "Normal" => Ok(EventType::Normal),
            "Warning" => Ok(EventType::Warning),
            other => Err(RecordError::InvalidEventType(other.to_owned())),
        }
    }
}

/// What the recorder accepts as an event type: an [`EventType`], or a string that must be
/// `Normal` or `Warning` (client-go's recorder takes strings and rejects other values).
pub trait IntoEventType {
    /// The validated event type.
    fn into_event_type(self) -> Result<EventType, RecordError>;
}

impl IntoEventType for EventType {
    fn into_event_type(self) -> Result<EventType, RecordError> {
        Ok(self)
    }
}

impl IntoEventType for &str {
    fn into_event_type(self) -> Result<EventType, RecordError> {
        self.parse()
    }
}

impl IntoEventType for String {
    fn into_event_type(self) -> Result<EventType, RecordError> {
        self.parse()
    }
}

impl IntoEventType for &String {
    fn into_event_type(self) -> Result<EventType, RecordError> {
        self.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_normal_and_warning_are_event_types() {
        assert_eq!("Normal".into_event_type(), Ok(EventType::Normal));
        assert_eq!(
            String::from("Warning").into_event_type(),
            Ok(EventType::Warning)
        );
        for bad in ["normal", "WARNING", "", "Error"] {
            assert_eq!(
                bad.into_event_type(),
                Err(RecordError::InvalidEventType(bad.into()))
            );
        }
        assert_eq!(EventType::Warning.to_string(), "Warning");
    }
}
