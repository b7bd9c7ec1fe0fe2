//! Where every key of a connection's life lives in Redis: one place, so that what must change
//! together can be changed in one script on a Redis Cluster too.
//!
//! A cluster runs a script only over keys of one hash slot. So the grants, and everything a
//! grant's write touches, live in **buckets**: each grant falls into one of [`BUCKETS`] by its
//! owner (a tag of principal and provider, so a person's accounts at a provider share one), and
//! every key of a bucket carries the bucket's hash tag, `{T}`:
//!
//! | key | what |
//! |---|---|
//! | `grant:{T}:OWNER` (`:TAG` for each further account) | a grant's hash |
//! | `grant-accounts:{T}:OWNER` | the grant keys of an owner's accounts |
//! | `grants:{T}` | every grant key of the bucket (what scans read: no `SCAN` on a cluster) |
//! | `keepalive:{T}` | the bucket's grants by when the keep-alive next looks at them |
//! | `outbox:{T}:CONN:ENDPOINT` (`outbox-log:…`, `outbox-parked:…`) | a connection's deliveries to an endpoint |
//! | `outbox-lists:{T}`, `outbox-endpoints:{T}` | the bucket's pending lists, and the endpoints they are for |
//! | `outbox-due:{T}:ENDPOINT` | the bucket's lists with work for an endpoint, by when their head is due |
//!
//! Each bucket's tag is chosen so that its slot falls in its own 1/[`BUCKETS`] of the slot
//! space: the buckets spread over a cluster's primaries however its slots are assigned. Keys
//! of their own (flows, leases, sessions, counters) carry their own tag and are untouched.
//! [`super::migrate`] moves a store written before buckets into them.

use std::sync::OnceLock;

/// How many buckets the grants are spread over: enough for a cluster of up to about 32
/// primaries to hold two each or more; few enough that a scan of every bucket (the keep-alive
/// and the outbox look at each in turn) stays cheap.
pub(crate) const BUCKETS: u16 = 64;

/// The marker a store laid out in buckets carries (its value: how many).
pub(crate) const MARKER: &str = "layout";

/// The hash slots of Redis Cluster.
const SLOTS: u32 = 16_384;

/// One bucket of the grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bucket(u16);

impl Bucket {
    /// The bucket of an owner tag (FNV-1a of its bytes: fixed for ever, as keys are named by it).
    pub fn of(owner_tag: &str) -> Self {
        let hash = owner_tag.bytes().fold(0x811c_9dc5_u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
        });
        Self((hash % u32::from(BUCKETS)) as u16)
    }

    /// Every bucket, in order.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..BUCKETS).map(Self)
    }

    /// Its hash tag (without the braces).
    pub(crate) fn tag(self) -> &'static str {
        &tags()[usize::from(self.0)]
    }

    /// The bucket a key of this layout is in, by its hash tag.
    pub(crate) fn in_key(key: &str) -> Option<Self> {
        let start = key.find('{')? + 1;
        let end = start + key[start..].find('}')?;
        let tag = &key[start..end];
        tags().iter().position(|t| t == tag).map(|i| Self(i as u16))
    }
}

/// Each bucket's tag: the first `b{i}.{n}` whose slot falls in the bucket's range.
fn tags() -> &'static [String] {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    TAGS.get_or_init(|| {
        (0..u32::from(BUCKETS))
            .map(|i| {
                let range =
                    (i * SLOTS / u32::from(BUCKETS))..((i + 1) * SLOTS / u32::from(BUCKETS));
                (0u32..)
                    .map(|n| format!("b{i}.{n}"))
                    .find(|tag| range.contains(&slot(tag)))
                    .expect("some tag falls in every range")
            })
            .collect()
    })
}

/// The Redis Cluster slot of a hash tag.
fn slot(tag: &str) -> u32 {
    u32::from(crc16::State::<crc16::XMODEM>::calculate(tag.as_bytes())) % SLOTS
}

/// Every key name of the layout under one prefix.
#[derive(Debug, Clone)]
pub struct Keys {
    prefix: String,
}

impl Keys {
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
        }
    }

    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// A grant's hash: the owner's one without accounts, or one account's (`tag`).
    pub fn grant(&self, owner: &str, tag: Option<&str>) -> String {
        let bucket = Bucket::of(owner).tag();
        match tag {
            None => format!("{}grant:{{{bucket}}}:{owner}", self.prefix),
            Some(tag) => format!("{}grant:{{{bucket}}}:{owner}:{tag}", self.prefix),
        }
    }

    pub(crate) fn grant_accounts(&self, owner: &str) -> String {
        let bucket = Bucket::of(owner).tag();
        format!("{}grant-accounts:{{{bucket}}}:{owner}", self.prefix)
    }

    pub fn grants(&self, bucket: Bucket) -> String {
        format!("{}grants:{{{}}}", self.prefix, bucket.tag())
    }

    pub fn keepalive(&self, bucket: Bucket) -> String {
        format!("{}keepalive:{{{}}}", self.prefix, bucket.tag())
    }

    /// The pending list of one connection's deliveries to `endpoint`.
    pub(crate) fn outbox(&self, bucket: Bucket, connection: &str, endpoint: &str) -> String {
        format!(
            "{}outbox:{{{}}}:{connection}:{endpoint}",
            self.prefix,
            bucket.tag()
        )
    }

    /// The log (`log`) or parked (`parked`) list beside a pending one.
    pub(crate) fn beside(&self, pending: &str, kind: &str) -> String {
        let rest = pending
            .strip_prefix(&format!("{}outbox:", self.prefix))
            .unwrap_or(pending);
        format!("{}outbox-{kind}:{rest}", self.prefix)
    }

    pub(crate) fn outbox_lists(&self, bucket: Bucket) -> String {
        format!("{}outbox-lists:{{{}}}", self.prefix, bucket.tag())
    }

    pub(crate) fn outbox_endpoints(&self, bucket: Bucket) -> String {
        format!("{}outbox-endpoints:{{{}}}", self.prefix, bucket.tag())
    }

    pub(crate) fn outbox_due(&self, bucket: Bucket, endpoint: &str) -> String {
        format!("{}outbox-due:{{{}}}:{endpoint}", self.prefix, bucket.tag())
    }

    pub(crate) fn marker(&self) -> String {
        format!("{}{MARKER}", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bucket_tag_falls_in_its_own_slice_of_the_slots() {
        let mut last = None;
        for bucket in Bucket::all() {
            let slot = slot(bucket.tag());
            let i = u32::from(bucket.0);
            assert!(
                slot >= i * SLOTS / u32::from(BUCKETS)
                    && slot < (i + 1) * SLOTS / u32::from(BUCKETS)
            );
            assert!(last.is_none_or(|l| l < slot), "in order");
            last = Some(slot);
        }
        // CRC16/XMODEM as Redis Cluster computes it (`CLUSTER KEYSLOT foo` is 12182).
        assert_eq!(slot("foo"), 12182);
    }

    #[test]
    fn every_key_of_a_grant_shares_its_bucket() {
        let keys = Keys::new("p:");
        let owner = "o1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_ab";
        let bucket = Bucket::of(owner);
        for key in [
            keys.grant(owner, None),
            keys.grant(owner, Some("t2")),
            keys.grant_accounts(owner),
            keys.grants(bucket),
            keys.keepalive(bucket),
            keys.outbox(bucket, "t2", "ep"),
            keys.beside(&keys.outbox(bucket, "t2", "ep"), "parked"),
            keys.outbox_lists(bucket),
            keys.outbox_due(bucket, "ep"),
        ] {
            assert_eq!(Bucket::in_key(&key), Some(bucket), "{key}");
        }
        assert_eq!(
            keys.beside("p:outbox:{b1.7}:c:ep", "log"),
            "p:outbox-log:{b1.7}:c:ep"
        );
    }

    #[test]
    fn owners_spread_over_the_buckets() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..2000 {
            seen.insert(Bucket::of(&format!("owner-{i}")));
        }
        assert_eq!(seen.len(), usize::from(BUCKETS));
    }
}
