//! Status conditions (apimachinery's `meta.SetStatusCondition`, `FindStatusCondition`,
//! `RemoveStatusCondition`, `IsStatusConditionTrue` / `False`) on a
//! `Vec<metav1.Condition>`, the list a custom resource's `status.conditions` holds.
//!
//! `lastTransitionTime` means "when the status last changed", so [`set_condition`] keeps
//! it while the status stays the same (a new reason, message or observedGeneration is not a
//! transition) and moves it to now when the status changes. A condition given without a
//! time (the Unix epoch, `Time(Timestamp::UNIX_EPOCH)`, or Go's zero time
//! `0001-01-01T00:00:00Z`, which a Go client writes for an unset `metav1.Time`) is stamped
//! with now.

use k8s_openapi::{
    apimachinery::pkg::apis::meta::v1::{Condition, Time},
    jiff::Timestamp,
};

/// `Condition.status` of a condition that holds.
pub const CONDITION_TRUE: &str = "True";
/// `Condition.status` of a condition that does not hold.
pub const CONDITION_FALSE: &str = "False";
/// `Condition.status` when it is not known whether the condition holds.
pub const CONDITION_UNKNOWN: &str = "Unknown";

/// Whether `time` is unset: the Unix epoch or anything before it, such as Go's zero time
/// that a Go client may have written.
fn is_unset(time: &Time) -> bool {
    time.0 <= Timestamp::UNIX_EPOCH
}

/// Sets `condition` in `conditions` (apimachinery's `SetStatusCondition`); whether anything
/// changed, so a caller writes the status only when it must.
///
/// A condition of a new type is appended (its `lastTransitionTime` set to now when unset).
/// An existing one takes the new status, reason, message and observedGeneration; its
/// `lastTransitionTime` moves (to the given time, or now when unset) only when the status
/// changes, and is kept otherwise.
pub fn set_condition(conditions: &mut Vec<Condition>, condition: Condition) -> bool {
    set_condition_at(conditions, condition, Timestamp::now())
}

/// [`set_condition`] with `now` as the current time.
fn set_condition_at(
    conditions: &mut Vec<Condition>,
    mut condition: Condition,
    now: Timestamp,
) -> bool {
    let Some(existing) = conditions.iter_mut().find(|c| c.type_ == condition.type_) else {
        if is_unset(&condition.last_transition_time) {
            condition.last_transition_time = Time(now);
        }
        conditions.push(condition);
        return true;
    };
    let mut changed = false;
    if existing.status != condition.status {
        existing.status = condition.status;
        existing.last_transition_time = if is_unset(&condition.last_transition_time) {
            Time(now)
        } else {
            condition.last_transition_time
        };
        changed = true;
    }
    if existing.reason != condition.reason {
        existing.reason = condition.reason;
        changed = true;
    }
    if existing.message != condition.message {
        existing.message = condition.message;
        changed = true;
    }
    if existing.observed_generation != condition.observed_generation {
        existing.observed_generation = condition.observed_generation;
        changed = true;
    }
    changed
}

/// The condition of type `type_`, if present (apimachinery's `FindStatusCondition`).
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Removes the condition of type `type_` (apimachinery's `RemoveStatusCondition`); whether
/// one was there.
pub fn remove_condition(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|c| c.type_ != type_);
    conditions.len() != before
}

/// Whether the condition of type `type_` is present with status `status`
/// (apimachinery's `IsStatusConditionPresentAndEqual`).
pub fn is_condition_present_and_equal(conditions: &[Condition], type_: &str, status: &str) -> bool {
    find_condition(conditions, type_).is_some_and(|c| c.status == status)
}

/// Whether the condition of type `type_` is present and `True` (apimachinery's
/// `IsStatusConditionTrue`).
pub fn is_condition_true(conditions: &[Condition], type_: &str) -> bool {
    is_condition_present_and_equal(conditions, type_, CONDITION_TRUE)
}

/// Whether the condition of type `type_` is present and `False` (apimachinery's
/// `IsStatusConditionFalse`); an absent condition is neither true nor false.
pub fn is_condition_false(conditions: &[Condition], type_: &str) -> bool {
    is_condition_present_and_equal(conditions, type_, CONDITION_FALSE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).expect("in range")
    }

    fn ready(status: &str, reason: &str) -> Condition {
        Condition {
            type_: "Ready".into(),
            status: status.into(),
            reason: reason.into(),
            message: String::new(),
            observed_generation: Some(1),
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
        }
    }

    /// apimachinery `conditions_test.go`, `TestSetStatusCondition`: "add when empty" stamps
    /// now; "use the provided lastTransitionTime" keeps a given one.
    #[test]
    fn a_new_condition_is_appended_and_stamped_only_when_unset() {
        let mut conditions = Vec::new();
        assert!(set_condition_at(
            &mut conditions,
            ready(CONDITION_TRUE, "Up"),
            at(100)
        ));
        assert_eq!(conditions[0].last_transition_time, Time(at(100)));
        let mut given = ready(CONDITION_FALSE, "Down");
        given.type_ = "Degraded".into();
        given.last_transition_time = Time(at(7));
        assert!(set_condition_at(&mut conditions, given, at(100)));
        assert_eq!(conditions[1].last_transition_time, Time(at(7)));
        assert_eq!(conditions.len(), 2);
    }

    /// `TestSetStatusCondition` "update fields": the same status with a new reason, message
    /// or observedGeneration keeps lastTransitionTime.
    #[test]
    fn the_same_status_keeps_last_transition_time() {
        let mut conditions = Vec::new();
        set_condition_at(&mut conditions, ready(CONDITION_TRUE, "Up"), at(100));
        let mut newer = ready(CONDITION_TRUE, "StillUp");
        newer.message = "all replicas available".into();
        newer.observed_generation = Some(2);
        assert!(set_condition_at(&mut conditions, newer.clone(), at(200)));
        let c = find_condition(&conditions, "Ready").expect("present");
        assert_eq!(c.last_transition_time, Time(at(100)), "no transition");
        assert_eq!(
            (c.reason.as_str(), c.observed_generation),
            ("StillUp", Some(2))
        );
        assert!(
            !set_condition_at(&mut conditions, newer, at(300)),
            "setting the same condition again changes nothing"
        );
    }

    /// `TestSetStatusCondition` "set status and transition time": a status change moves
    /// lastTransitionTime to now, or to the time given with the condition.
    #[test]
    fn a_status_change_moves_last_transition_time() {
        let mut conditions = Vec::new();
        set_condition_at(&mut conditions, ready(CONDITION_TRUE, "Up"), at(100));
        assert!(set_condition_at(
            &mut conditions,
            ready(CONDITION_FALSE, "Down"),
            at(200)
        ));
        assert_eq!(conditions[0].last_transition_time, Time(at(200)));
        assert!(is_condition_false(&conditions, "Ready"));
        let mut given = ready(CONDITION_TRUE, "Up");
        given.last_transition_time = Time(at(150));
        assert!(set_condition_at(&mut conditions, given, at(300)));
        assert_eq!(conditions[0].last_transition_time, Time(at(150)));
        assert_eq!(conditions.len(), 1);
    }

    /// Go's zero time (what a Go client sends for an unset `metav1.Time`) counts as unset.
    #[test]
    fn go_zero_time_counts_as_unset() {
        let zero: Time = serde_json::from_value(serde_json::json!("0001-01-01T00:00:00Z"))
            .expect("Go's zero time parses");
        let mut c = ready(CONDITION_TRUE, "Up");
        c.last_transition_time = zero;
        let mut conditions = Vec::new();
        set_condition_at(&mut conditions, c, at(100));
        assert_eq!(conditions[0].last_transition_time, Time(at(100)));
    }

    /// `TestRemoveStatusCondition`, `TestFindStatusCondition`, `TestIsStatusConditionTrue`.
    #[test]
    fn find_remove_and_truth() {
        let mut conditions = Vec::new();
        assert!(!remove_condition(&mut conditions, "Ready"));
        set_condition(&mut conditions, ready(CONDITION_TRUE, "Up"));
        set_condition(&mut conditions, {
            let mut c = ready(CONDITION_UNKNOWN, "Probing");
            c.type_ = "Available".into();
            c
        });
        assert!(is_condition_true(&conditions, "Ready"));
        assert!(!is_condition_false(&conditions, "Ready"));
        assert!(!is_condition_true(&conditions, "Available"));
        assert!(!is_condition_false(&conditions, "Available"), "Unknown");
        assert!(!is_condition_true(&conditions, "Missing"));
        assert!(!is_condition_false(&conditions, "Missing"));
        assert!(remove_condition(&mut conditions, "Ready"));
        assert!(find_condition(&conditions, "Ready").is_none());
        assert_eq!(conditions.len(), 1);
    }
}
