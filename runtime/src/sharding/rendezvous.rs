//! Rendezvous (highest random weight) hashing: an object goes to the member whose hash
//! with the object's key is highest. Adding a member moves only the objects it now wins
//! (about 1/n of them); removing one moves only its own. The hash is FNV-1a over
//! `member \0 key` finished by SplitMix64's mixer: fixed, so every replica and every build
//! agrees on an assignment (std's `DefaultHasher` promises neither).

/// The member of `members` that `key` goes to (`None` when there is none). Ties, which
/// need equal 64-bit hashes, go to the smaller member name.
pub fn pick<'m>(key: &str, members: impl IntoIterator<Item = &'m str>) -> Option<&'m str> {
    members
        .into_iter()
        .map(|member| (weight(member, key), member))
        .max_by(|(wa, ma), (wb, mb)| wa.cmp(wb).then_with(|| mb.cmp(ma)))
        .map(|(_, member)| member)
}

/// The weight of `member` for `key`.
pub fn weight(member: &str, key: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    for byte in member.bytes().chain([0]).chain(key.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(PRIME);
    }
    // SplitMix64's finalizer spreads FNV's weak low bits.
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn no_member_no_pick() {
        assert_eq!(pick("k", []), None);
        assert_eq!(pick("k", ["a"]), Some("a"));
    }

    #[test]
    fn the_hash_is_fixed() {
        // Pinned: replicas built apart must agree.
        assert_eq!(weight("a", "k"), weight("a", "k"));
        assert_ne!(weight("a", "k"), weight("b", "k"));
        assert_ne!(weight("ab", "k"), weight("a", "bk"));
    }

    #[test]
    fn shares_are_even() {
        let members = ["m0", "m1", "m2"];
        let mut counts = [0usize; 3];
        for i in 0..30_000 {
            let key = format!("default/foo-{i}");
            let m = pick(&key, members).unwrap();
            counts[members.iter().position(|x| *x == m).unwrap()] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }

    proptest! {
        /// Adding a member moves objects only to it; removing one moves only its objects.
        #[test]
        fn membership_changes_move_only_what_they_must(
            keys in proptest::collection::vec("[a-z]{1,8}/[a-z0-9-]{1,12}", 1..60),
            n in 1usize..6,
        ) {
            let members: Vec<String> = (0..n).map(|i| format!("m{i}")).collect();
            let joined: Vec<String> = members.iter().cloned().chain(["new".to_owned()]).collect();
            for key in &keys {
                let before = pick(key, members.iter().map(String::as_str)).unwrap();
                let after = pick(key, joined.iter().map(String::as_str)).unwrap();
                prop_assert!(after == before || after == "new");
                let left: Vec<&str> = members.iter().map(String::as_str).filter(|m| *m != "m0").collect();
                if let Some(without) = pick(key, left.iter().copied()) {
                    prop_assert!(before == "m0" || without == before);
                }
            }
        }
    }
}
