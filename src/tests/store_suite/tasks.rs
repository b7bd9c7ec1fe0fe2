//! Tasks: written once, read back whole, changed only from the version read (one of many
//! concurrent writers wins), swept at expiry (a time to live extended is kept), erased with
//! their owner alone.

use crate::identity::Principal;
use crate::startup::Stores;
use crate::tasks::{StoredTask, TaskId, TaskStatus};

const NOW: i64 = 1_800_000_000_000;
const TTL: i64 = 15 * 60 * 1000;

fn person(subject: &str) -> Principal {
    Principal {
        issuer: "urn:test".into(),
        subject: subject.into(),
    }
}

fn task(owner: &str, created_at_ms: i64) -> StoredTask {
    StoredTask {
        id_hash: TaskId::generate().hash(),
        principal: person(owner),
        status: TaskStatus::InputRequired,
        version: 1,
        created_at_ms,
        updated_at_ms: created_at_ms,
        expires_at_ms: created_at_ms + TTL,
        sealed: format!("g1.sealed-call-of-{owner}"),
    }
}

async fn a_task_reads_back_as_written_and_only_under_its_hash(stores: &Stores) {
    let written = task("alice", NOW);
    stores.tasks.insert(&written).await.unwrap();
    assert_eq!(
        stores.tasks.get(&written.id_hash).await.unwrap(),
        Some(written.clone())
    );
    assert_eq!(stores.tasks.get("no-such-hash").await.unwrap(), None);
    assert!(
        stores.tasks.insert(&written).await.is_err(),
        "a second task under the same hash is refused"
    );
    assert_eq!(
        stores.tasks.get(&written.id_hash).await.unwrap(),
        Some(written),
        "and changes nothing"
    );
}
for_each_backend!(a_task_reads_back_as_written_and_only_under_its_hash);

async fn only_one_of_many_writers_from_the_same_version_wins(stores: &Stores) {
    let written = task("alice", NOW);
    stores.tasks.insert(&written).await.unwrap();
    let mut writers = Vec::new();
    for n in 0..20 {
        let tasks = stores.tasks.clone();
        let mut finished = written.clone();
        finished.status = TaskStatus::Completed;
        finished.updated_at_ms = NOW + 1000;
        finished.sealed = format!("g1.result-{n}");
        writers.push(tokio::spawn(async move {
            (tasks.replace(&finished).await.unwrap(), finished.sealed)
        }));
    }
    let mut winners = Vec::new();
    for writer in writers {
        let (won, sealed) = writer.await.unwrap();
        if won {
            winners.push(sealed);
        }
    }
    assert_eq!(winners.len(), 1, "exactly one writer wins: {winners:?}");
    let stored = stores.tasks.get(&written.id_hash).await.unwrap().unwrap();
    assert_eq!(stored.sealed, winners[0]);
    assert_eq!(
        (stored.status, stored.version, stored.updated_at_ms),
        (TaskStatus::Completed, 2, NOW + 1000)
    );
    assert_eq!(
        (stored.created_at_ms, stored.principal.subject.as_str()),
        (NOW, "alice"),
        "what a change does not name stays"
    );
    let mut stale = written.clone();
    stale.status = TaskStatus::Cancelled;
    assert!(
        !stores.tasks.replace(&stale).await.unwrap(),
        "version 1 is gone"
    );
    let mut unknown = task("alice", NOW);
    unknown.status = TaskStatus::Cancelled;
    assert!(
        !stores.tasks.replace(&unknown).await.unwrap(),
        "never written"
    );
    assert_eq!(stores.tasks.get(&unknown.id_hash).await.unwrap(), None);
}
for_each_backend!(only_one_of_many_writers_from_the_same_version_wins);

async fn a_longer_time_to_live_outlasts_the_sweep(stores: &Stores) {
    let waiting = task("alice", NOW);
    let other = task("alice", NOW);
    for t in [&waiting, &other] {
        stores.tasks.insert(t).await.unwrap();
    }
    let mut extended = waiting.clone();
    extended.expires_at_ms = NOW + 2 * TTL;
    assert!(stores.tasks.replace(&extended).await.unwrap());

    // Past the first expiry: the sweep takes the other task, not the one extended.
    let later = NOW + TTL + 5;
    assert_eq!(stores.tasks.delete_expired(later).await.unwrap(), 1);
    assert_eq!(stores.tasks.get(&other.id_hash).await.unwrap(), None);
    let kept = stores.tasks.get(&waiting.id_hash).await.unwrap().unwrap();
    assert_eq!((kept.expires_at_ms, kept.version), (NOW + 2 * TTL, 2));
    assert!(!kept.is_expired(later));
}
for_each_backend!(a_longer_time_to_live_outlasts_the_sweep);

async fn the_sweep_removes_expired_tasks_and_erasing_a_person_theirs(stores: &Stores) {
    let lapsed = task("alice", NOW - TTL - 10);
    let fresh = task("alice", NOW);
    let bobs_lapsed = task("bob", NOW - TTL - 10);
    let bobs = task("bob", NOW);
    for t in [&lapsed, &fresh, &bobs_lapsed, &bobs] {
        stores.tasks.insert(t).await.unwrap();
    }
    assert!(lapsed.is_expired(NOW) && !fresh.is_expired(NOW));
    assert_eq!(stores.tasks.delete_expired(NOW).await.unwrap(), 2);
    assert_eq!(stores.tasks.get(&lapsed.id_hash).await.unwrap(), None);
    assert_eq!(stores.tasks.get(&bobs_lapsed.id_hash).await.unwrap(), None);
    assert!(stores.tasks.get(&fresh.id_hash).await.unwrap().is_some());
    assert_eq!(stores.tasks.delete_expired(NOW).await.unwrap(), 0, "once");

    assert_eq!(stores.tasks.forget(&person("alice")).await.unwrap(), 1);
    assert_eq!(stores.tasks.get(&fresh.id_hash).await.unwrap(), None);
    assert_eq!(stores.tasks.forget(&person("alice")).await.unwrap(), 0);
    assert_eq!(
        stores.tasks.get(&bobs.id_hash).await.unwrap(),
        Some(bobs),
        "another person's task stays"
    );
}
for_each_backend!(the_sweep_removes_expired_tasks_and_erasing_a_person_theirs);

async fn a_persons_open_tasks_are_found_last_made_first(stores: &Stores) {
    let older = task("alice", NOW);
    let newer = task("alice", NOW + 1_000);
    let mut ended = task("alice", NOW + 2_000);
    let expired = task("alice", NOW - TTL);
    let someone_elses = task("bob", NOW + 3_000);
    for t in [&older, &newer, &ended, &expired, &someone_elses] {
        stores.tasks.insert(t).await.unwrap();
    }
    ended.status = TaskStatus::Completed;
    assert!(stores.tasks.replace(&ended).await.unwrap());
    let mut working = newer.clone();
    working.status = TaskStatus::Working;
    assert!(stores.tasks.replace(&working).await.unwrap());

    let alice = person("alice");
    let hashes =
        |tasks: Vec<StoredTask>| -> Vec<String> { tasks.into_iter().map(|t| t.id_hash).collect() };
    let open = stores.tasks.open_of(&alice, NOW + 5_000, 10).await.unwrap();
    assert_eq!(
        hashes(open),
        [newer.id_hash.clone(), older.id_hash.clone()],
        "neither ended, expired nor someone else's"
    );
    let first = stores.tasks.open_of(&alice, NOW + 5_000, 1).await.unwrap();
    assert_eq!(hashes(first), [newer.id_hash]);
    assert!(
        stores
            .tasks
            .open_of(&person("carol"), NOW, 10)
            .await
            .unwrap()
            .is_empty()
    );
}
for_each_backend!(a_persons_open_tasks_are_found_last_made_first);

async fn a_persons_live_tasks_are_counted_ended_or_not(stores: &Stores) {
    let tasks = &stores.tasks;
    let open = task("erin", NOW);
    let ended = StoredTask {
        status: TaskStatus::Completed,
        ..task("erin", NOW + 1)
    };
    let expired = task("erin", NOW - 2 * TTL);
    for written in [&open, &ended, &expired, &task("frank", NOW)] {
        tasks.insert(written).await.unwrap();
    }
    assert_eq!(tasks.live_count(&person("erin"), NOW).await.unwrap(), 2);
    assert_eq!(tasks.live_count(&person("frank"), NOW).await.unwrap(), 1);
    assert_eq!(tasks.live_count(&person("gus"), NOW).await.unwrap(), 0);
    assert_eq!(
        tasks.live_count(&person("erin"), NOW + TTL).await.unwrap(),
        1,
        "the first made has expired by then"
    );
}
for_each_backend!(a_persons_live_tasks_are_counted_ended_or_not);
