//! What a report says happened, in its writer's words, where no program's line is
//! pasted: `there is a memory leak`, `gnome-shell segfaults on start`, `the pod got OOM
//! killed`, `oomd killed httpd.service`, `once I max out my RAM and start using swap`.
//!
//! A claim is `possible` at most, and only where the sentence does not deny, suppose,
//! avoid or fix it (`no memory leak`, `if your pod is OOM killed`, `fixes a segfault`).
//! Pages that teach about these (an article, a manual) are set aside before any rule.

use std::sync::OnceLock;

use regex::Regex;

use super::super::engine::lazy_regex;
use super::super::prose::matches;
use super::{rule, FailureClass as C, Rule};
use crate::model::finding::Certainty::Possible;
use crate::model::finding::Severity::{Info, Warn};

/// A shell's `Killed` retold by the writer: a SIGKILL whose sender the text shows or
/// not, as for the shell's own line.
pub const RETOLD_KILLED: &str = "prose.killed-claim";

/// A thread's word that memory ran out (`most likely you are running out of memory`):
/// it tells who sent a plain SIGKILL the text shows, and alone claims nothing (see
/// `report::findings`).
pub const OUT_OF_MEMORY_TOLD: &str = "prose.out-of-memory-told";

pub(super) static RULES: &[Rule] = &[
    Rule {
        extract: Some(super::leak_claim::extract_leak_claim),
        certainty: Possible,
        ..rule(
            // The report itself says the program leaks, in its own language: the
            // claim, not a measurement (figures, where pasted, say more). The languages
            // are those the collected reports were written in: each other one costs
            // the prefilter an anchor of its own.
            "prose.leak-claim",
            C::MemoryGrowth,
            Warn,
            &[
                "emory leak",
                "emory-leak",
                "leaks ",
                "leaking ",
                "leaked ",
                "fuite",
                "vazamento",
                "утечк",
                "内存泄",
                "メモリリーク",
                "דליפת ז",
                "메모리 누수",
                "메모리누수",
            ],
            r"(?i:(?P<claim>memory[- ]leaks?|leak(?:s|ing|ed) (?:(?:gpu|cuda|shared|native|heap|node|process|system|virtual|kernel|host|device|video|graphics|physical|unmanaged|managed|jvm|python|js) )?(?:memory|ram)\b|fuites? (?:de |d'une )?m[ée]moire|vazamentos? de mem[óo]ria|(?-i:утечк\w* памяти)|内存泄[漏露]|メモリリーク|דליפת זי?כרון|메모리\s?누수))",
            "The report says the program leaks memory ({claim})",
        )
    },
    Rule {
        extract: Some(extract_rising_memory),
        certainty: Possible,
        ..rule(
            // Memory said to rise and keep rising, in a sentence of the writer's own:
            // `the RAM consumption constantly increases`, `RSS is still climbing`, `la
            // memoria va aumentando constantemente`, `gradually eating up my memory`,
            // `it gradually eats memory`, or in the next sentence of the line (`watch
            // viewer memory usage. It grows without bound.`). The rise needs a word
            // that it lasts (over time, still, until, after each call, while training,
            // at a rate of, until it reaches the limit); see `extract_rising_memory`.
            "prose.rising-memory",
            C::MemoryGrowth,
            Warn,
            // Each literal is (or holds) an anchor of the prefilter's: the rises told
            // otherwise (`went up`, `rose`) cost more than they read.
            // `goes up` and `rises` hold none, so they are read only right after what
            // rose (`Memory usage goes up and never down`, `see the ram usage rise`).
            &[
                "ncreas",
                "grow",
                "creep",
                "climb",
                "rising",
                "aumenta",
                "more and more memory",
                "usage goes up",
                "usage going up",
                "usage went up",
                "usage rise",
                "memory goes up",
                "memory going up",
                "memory went up",
                "memory rise",
                "eating up my memory",
                "eating up memory",
                "eating up the memory",
                "eats up my memory",
                "eats up memory",
                "eats up the memory",
                "eats memory",
                "eats my memory",
                "eats the memory",
                "eating memory",
                "eating my memory",
                "eating the memory",
            ],
            r"(?i:(?P<claim>\b(?:memory|ram|rss|heap|vram|leak|working set|resident (?:set|size|memory)|process size|memoria|m[ée]moire)\b(?:[^.\n]|\.[^\s.]){0,60}?\b(?:increas\w*|grow(?:s|ing|n)?|rising|climb\w*|creep\w*|aumenta\w*)\b|\b(?:unbounded|unlimited|uncontrolled|runaway|steady|continuous|constant|consistent|gradual|monotonic)(?:,? \w+){0,2} (?:memory|ram|rss|heap) growth\b|\bmore and more memory\b|\b(?:memory|usage) (?:goes up|going up|went up|rises?)\b|\b(?:memory|ram|rss|heap)\b[^.\n]{0,80}\.\s+(?:and |but )?(?:it|this|that)\s+(?:\w+ly\s+)?(?:(?:just |still )?keeps?(?: on)? |continues to |is |was )?(?:increas\w*|grow(?:s|ing)?|climb\w*|rising)\b|\b(?:increas(?:es|ing)|growing|rising|climbing|creeping)(?: [\w']+){0,2} (?:memory|ram|rss|heap|vram)\b|\beat(?:s|ing) up (?:my |the )?memory\b|\b(?:gradually|slowly|constantly|steadily|continuously|progressively) eat(?:s|ing) (?:my |the )?memory\b|\b(?:steady|constant|continuous|gradual|linear) increase in (?:the )?(?:memory|ram)\b))",
            "The report says memory keeps rising ({claim})",
        )
    },
    Rule {
        extract: Some(extract_unfreed_claim),
        certainty: Possible,
        ..rule(
            // Memory watched not coming back: `memory isn't being freed`, `При загрузке
            // workspace не освобождается память` (memory is not freed). Not the plain
            // `memory isn't freed`: PyTorch's FAQ titles an entry so.
            "prose.unfreed-memory-claim",
            C::MemoryGrowth,
            Warn,
            &[
                "emory is not being",
                "emory isn't being",
                "emory was not being",
                "emory wasn't being",
                "emory is not getting",
                "emory isn't getting",
                "emory doesn't get",
                "emory does not get",
                "emory didn't get",
                "освобожда",
            ],
            r"(?i:(?P<claim>\bmemory (?:(?:is not|isn't|was not|wasn't) (?:being|getting)|(?:doesn't|does not|didn't) get) (?:freed|released|reclaimed|deallocated)\b|(?-i:не освобожда\w* памят\w*|памят\w* не освобожда\w*)))",
            "The report says memory is not given back ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // `I am getting Memory Error even after having more than a terabyte`:
            // Python's exception retold; `日志文件报内存溢出` (the log reports memory
            // overflow), a JVM's OutOfMemoryError as Chinese reports name it; `It runs
            // into a OutofMemory error`; the JVM's heap space named with the word error
            // (`encountered this error twice at import : Java Heap space`, `échoue avec
            // une erreur heap space`, `OOM java heap space issue`); `Wildfly eventually throws an
            // Out Of Memory error`.
            "prose.memory-error-claim",
            C::HostAllocFailure,
            Warn,
            &[
                "emory error",
                "emoryerror",
                "内存溢出",
                "into a outofmemory",
                "into an outofmemory",
                "heap space",
                "an out of memory error",
                "an outofmemory",
            ],
            r"(?i:(?P<claim>\b(?:runs?|ran|running) into an? [`'\x22]?OutOfMemory(?:Error| error|Exception| exception)\b|\b(?:error|erreur|exception|oom)\b[^.\n]{0,30}?\b(?:java )?heap space\b|\b(?:throws?|threw|throwing|raises?|raised|raising) an [`'\x22]?(?:out of memory|OutOfMemory) ?error\b|\b(?:i|we) (?:got|get|am getting|are getting|keep getting|kept getting|hit|encounter(?:ed)?) (?:a |an |the )?[`'\x22]?Memory ?Error\b|(?:报|出现|发生|提示|抛出|遇到)了?(?:java\s*)?内存溢出))",
            "The report says the program raised MemoryError ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // `prometheus is getting continually evicted due to memory issues`: the
            // kubelet's eviction, told; `Your kubelet is evicting your pod to reclaim
            // memory on your node`, the thread's answer.
            "prose.evicted-claim",
            C::UserspaceOomKill,
            Warn,
            &["evicted", "to reclaim memory"],
            r"(?i:(?P<claim>\b(?:is|was|were|are|got|gets|get|getting|been|being|keeps? getting)(?: \w+)? evicted (?:due to|because of|for) (?:\w+ ){0,2}?(?:memory|ram|oom)\b|\b(?:is|was|keeps|kept) evicting (?:\w+ ){0,2}?pods? to reclaim memory\b))",
            "The report says the pod was evicted for memory ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // `the pod got OOM killed`, `It gets recurrently OOMKilled`, `restarting
            // the pod with an \`OOM Killed\` message`, `before being terminated by OOM
            // killer`, `memory ballooning and OOM killing it`, `killed by the Linux OOM`,
            // `getting killed for exceeding the memory limit`, `the linux kernel
            // terminates it` (once RAM and swap are full), `killed by Linux kernel (Out of
            // memory)`, `the kernel killing Quickwit`, `The OOM killer repetitively killed
            // each of my instances`, `mostly silently OOM killed`, `Sidekiq process killed
            // by system because it use all of the memory`, `a ruby process was killed
            // for OOM`, `killed by Out of Memory (OOM)`, `the host is OOM-killing CH`,
            // `the OOM killer invokes and kills the JVMs`, `Turns out this was the OOM
            // killer`, `That is the OOM killer, not a compiler fault`, `This is almost
            // surely your kernel OOM killer`, `a workflow that resulted in OOM kill of the
            // process`, `killed by Kubernetes when memory crosses the defined limit`, `the
            // memory was completely (99%+) used during load so it was killed`, `your
            // computer ran out of ram, and the angr process was killed by your operating
            // system`, `sqlite was using some unmanaged memory …, so the OS killed the
            // process`, `this oom-killer seem to eager to kill the process`, `my process
            // was killed because of exceeding 240Gi of RAM`, `OOMKiller killed one of
            // dramatiq worker processes`, `gets killed by the OOM after reaching 100%`,
            // `Memory leak causes the OS to kill the docker container`: the
            // writer's word for the kill, without the kernel's lines. In the passive of
            // Chinese, Korean and Japanese: `被OOM Killer杀死`, `OOM Killer에 의해 강제
            // 종료된`, `OOM Killerによって強制終了`; Thai's and Vietnamese's passive before
            // the English word (`VM ถูก OOM-killed`, `bị OOM killed`); `qemu-kvm processes
            // are oom'ed`; `the OS runs out of memory and kills your process`; `querynode OOMKilled and then
            // CrashLoopBackOff`, `causing OOM-killer to kill everything`, `the kernel crashes because
            // it's running out of memory` (a notebook's), `completely fills my
            // RAM (64 GB), fills my swap (32 GB) and then the process is killed`.
            "prose.oom-killed-claim",
            C::OomKill,
            Warn,
            &[
                "OOM killed",
                " OOMed",
                " OOM'd",
                " OOM'ed",
                "out of memory and kills",
                "out of memory and killed",
                "out of ram and kills",
                "out of ram and killed",
                "OOM-killed",
                "OOMKilled",
                "to OOMKill",
                "to OOM kill",
                "to OOM-kill",
                "killed for OOM",
                "killed due to OOM",
                "killed because of OOM",
                "terminated due to OOM",
                "killed by out of memory",
                "killed by the out of memory",
                "killed by out-of-memory",
                "killed by the out-of-memory",
                "OOM Killed",
                " OOM killing",
                " OOM-killing",
                "killed by the linux oom",
                "killed by oom",
                "killed by linux oom",
                "killed because",
                "terminated because",
                "due to oom",
                "due to the oom",
                "due to linux oom",
                "due to the linux oom",
                "because of the oom",
                "because of oom",
                "due to kernel",
                "due to the kernel",
                "because of the kernel",
                "because of kernel",
                "exceeding the memory limit",
                "exceeding its memory limit",
                "exceeding my memory limit",
                "kernel terminates",
                "kernel terminated",
                "kernel kills",
                "kernel killed",
                "kernel killing",
                "by the kernel",
                "by linux kernel",
                "by the linux kernel",
                "by kernel",
                "killed by system",
                "killed by the system",
                "killed by the os",
                "killed by os",
                "killed by your os",
                "killed by your operating system",
                "killed by operating system",
                "killed by your system",
                "killed by the operating system",
                "os killed",
                "operating system killed",
                "system killed",
                "killed because of exceeding",
                "killed for exceeding",
                "killed due to exceeding",
                "killed after exceeding",
                "terminated because of exceeding",
                "terminated for exceeding",
                "terminated due to exceeding",
                "terminated after exceeding",
                "killed by kubernetes",
                "killed by k8s",
                "terminated by kubernetes",
                "restarted by kubernetes",
                "so it was killed",
                "so it got killed",
                "and it was killed",
                "and it got killed",
                "OOM killer",
                "OOM-killer",
                "OOMKiller",
                "OOM kills",
                "OOM-kills",
                "OOMKills",
                "OOM kill ",
                "OOM-kill ",
                "OOMKill ",
                "OOM kill.",
                "OOM-kill.",
                "OOMKill.",
                "killing",
                "error and kill",
                "in oom kill",
                "in an oom kill",
                "killed by the oom",
                "the os to kill",
                "the system to kill",
                "the kernel to kill",
                "operating system to kill",
                "is killed",
                "was killed",
                "gets killed",
                "got killed",
                "running out of memory",
                "running out of ram",
                "ran out of memory",
                "ran out of ram",
            ],
            r"(?i:(?P<claim>\b(?:was|were|got|gets|get|been|being|is|are|getting|keeps? getting|with an?)\s+(?:(?:\w+ly|rather|just|also|then|probably)\s+)?[`'\x22*]*OOM[ -]?killed\b|\b(?:is|are|was|were|get|gets|got|getting|being|been)\s+(?:\w+ly\s+)?OOM(?:'?ed|'d)\b|\b(?:os|operating system|system|kernel) (?:runs?|ran) out of (?:memory|ram) and (?:kills|killed) (?:the|your|my|our|it)\b|\sOOM[ -]killing (?:it|them|the process|my|our)\b|\b(?:killed|terminated|reaped|stopped|nuked|shot|murdered) by (?:the )?(?:linux |kernel(?:'s)? |os(?:'s)? )?OOM[ -]?killer\b|\bkilled by the (?:linux )?OOM\b|(?:^|\b(?:was|were|got|gets|get|getting|is|been|being) )killed by (?:linux )?OOM\b|\b(?:killed|terminated) because (?:of )?(?:an? |the )?(?:out[- ]of[- ]memory|OOM)\b|\b(?:dies|died|crash(?:es|ed)|terminat(?:es|ed)|exits|exited|stops|stopped|killed)\b(?: \w+ly)? (?:due to|because of) (?:the )?(?:linux |kernel(?:'s)? )?OOM[ -]?killer\b|\b(?:killed|terminated) (?:for|after|due to|because of) exceeding\b[^.;,\n]{0,30}?\b(?:memory|ram)\b|\b(?:memory|ram)\b[^.\n]{0,60}?\b(?:killed by (?:the |your )(?:os|operating system|system)\b|(?:so|and) the (?:os|operating system|system|kernel) killed (?:the|my|our|it)\b|caus(?:es|ed|ing) the (?:os|operating system|system|kernel) to kill\b)|\sOOM[ -]killer (?:seems?|appears?|tends?) (?:\w+ ){0,2}?to kill (?:the|my|our|it)\b|\b(?:linux )?kernel (?:then )?(?:terminates|kills) (?:it|them)\b|\b(?:linux )?kernel (?:then )?(?:terminated|killed|killing) (?:it|them|the (?:process|game|app|program|job)|(?-i:[A-Z]\w+))\b|\b(?:killed|terminated) by (?:the )?(?:linux )?kernel\b|(?:^|\s)OOM[ -]?killer (?:(?:\w+ly|then|also|just) )?(?:killed|terminated)\b|\sOOM[ -]killer will kill\b|\bOOM[ -]?killer (?:sends|sent) (?:a )?SIGKILL\b|\b(?:silently|repeatedly|randomly|eventually|constantly|frequently|sometimes) OOM[ -]?killed\b|\bkilled by (?:the |your )?(?:system|os|operating system)\b[^.\n]{0,40}?\b(?:memory|ram)\b|\b(?:crash(?:es|ed)?|fail(?:s|ed)?|dies|died|restart(?:s|ed)?|exits?|exited) due to [`'\x22]?OOM[ -]?kill(?:s|ed)?\b|\bkilled (?:for|due to|because of) OOM\b|\bterminated due to OOM\b|\bkilled by (?:the )?out[- ]of[- ]memory\b|\b(?:is|are|was|were|keeps?|kept|started|starts)\s+(?:\w+ly\s+)?OOM[ -]killing\b|\sOOM[ -]killer (?:invokes|invoked|kicks in|kicked in|(?:is|was|gets|got) (?:invoked|triggered)|comes|came) and (?:kills|killed|terminates|terminated)\b|\b(?:it|this|that) (?:was|is) (?:\w+ly )?(?:the |an? )?(?:linux |kernel(?:'s)? )?OOM[ -]killer\b|\balmost surely (?:the |your )?(?:linux |kernel(?:'s)? )?OOM[ -]killer\b|\b(?:resulted|results|ended) in (?:an? )?OOM[ -]kill\b|\b(?:killed|terminated|restarted) by (?:kubernetes|k8s)\b[^.\n]{0,60}?\b(?:memory|oom)\b|\b(?:memory|ram)\b[^.\n]{0,40}?\b(?:full|used up|exhausted|maxed out|used)\b[^.\n]{0,30}?\b(?:so|and) it (?:was|got) killed\b|\b(?-i:OOMKilled)\s+(?:and|then)\b[^.\n]{0,20}?\b(?:CrashLoopBackOff|restart\w*)|\b(?:caus|forc)(?:es|ed|ing) (?:the )?(?:linux |kernel(?:'s)? )?OOM[ -]?killer to (?:kill|terminate)\b|\bfill(?:s|ed|ing)? (?:up )?(?:all (?:of )?)?(?:the |my )?(?:ram|memory|swap)\b[^.\n]{0,80}?\band (?:then )?(?:the (?:process|job|program) |it )?(?:is|was|gets|got) killed\b|\b(?:crash(?:es|ed)?|dies|died)\b(?: \w+){0,3}? (?:because|since|due to)(?: \w+){0,2}? (?:(?:it'?s|it is|it was|is|was) )?(?:running|ran) out of (?:memory|ram)\b|(?:ถูก|bị)\s*[`'\x22]?OOM[ -]?killed\b|被\s*(?:the )?OOM[ -]?Killer\s*(?:给)?(?:杀死|杀掉|杀了|干掉|kill)|OOM[ -]?Killer\s*(?:에 의해|에게|가)\s*(?:강제\s*)?(?:종료|죽|kill)|OOM[ -]?Killer\s*(?:に|によって)\s*(?:殺|強制終了|kill)|\b(?:(?:i|we) (?:catch|see|get|experience|notice|hit)|caught|saw|seeing|got|getting|hitting|observed?|observing|experienced|experiencing|noticed|noticing) (?:(?:some|an?|the|frequent|repeated|random|occasional|constant|several|many|multiple|lots of|recurring) )?OOM[ -]?kill(?:s\b|[ .])|\b(?:hit|hitting) (?:an? |the )?\w+ OOM[ -]?kill(?:s\b|[ .])|\b(?:shows?|showed|showing|has|had|with|in|got|gets|trigger(?:s|ed)?(?: of)?) (?:an? |the )?(?-i:OOMKilled) (?:status|state|event)\b|\sOOM[ -]?killer (?:(?:seems|appears) to be|was|keeps|kept|started) (?:\w+ly )?killing\b|\b(?:os|operating system|system|kernel) (?:is|keeps) (?:\w+ly )?killing (?:the|my|our|it|them)\b|\b(?:(?:runs?|ran|running) out of (?:memory|ram)|out of memory error) and (?:kills|killed) (?:the|your|my|our|it|all|every|\S+ process)\b))",
            "The report says the process was OOM-killed ({claim})",
        )
    },
    Rule {
        extract: Some(extract_told),
        certainty: Possible,
        ..rule(
            // `It basically means you ran out of memory`, `most likely you are running
            // out of memory`, `the build machine ran out of memory`: the thread's
            // conclusion about the kill it shows. So is its reading of the kill
            // (`Looks like OOM`, `Almost certainly an out-of-memory error`, `failing
            // due to lack of memory`, `the memory is not enough`, `应该是内存爆了`, memory
            // blew up). Not `if you run out
            // of memory`, nor a guess (`leads me to guess that you are simply running
            // out of memory`), nor a question.
            OUT_OF_MEMORY_TOLD,
            C::OomKill,
            Info,
            &[
                "out of memory",
                // Not `out-of-memory` alone: healthy logs count it (`out-of-memory
                // retries 0`) on every line.
                "out-of-memory error",
                "out-of-memory issue",
                "out-of-memory problem",
                "like oom",
                "like an oom",
                "lack of memory",
                "lack of ram",
                "out of ram",
                "insufficient memory",
                "not enough memory",
                "not enough ram",
                "memory is not enough",
                "memory was not enough",
                "memory不够",
                "内存不足",
                "内存不够",
                "内存爆",
                "内存炸",
            ],
            r"(?i:(?P<claim>\b(?:you(?:'re| are| were)?|it(?:'s| is| was)?|(?:i|we)(?:'m| am| are| was| were)?|they(?:'re| are| were)?|(?:the |your |my |our )?(?:\w+ )?(?:machine|system|server|vm|node|box|container|runner|build|compiler|process|job)(?:'s| is| was)?)\s+(?:(?:probably|likely|just|simply|clearly|definitely|most likely|obviously)\s+)?(?:running|ran|runs|run) out of memory\b|\b(?:looks?|sounds?|seems?)(?: very much| much| a lot| more)? like (?:an? )?(?:oom\b|out of memory\b|out-of-memory (?:error|issue|problem)\b|out of ram\b|insufficient memory\b|not enough (?:memory|ram)\b)|\b(?:due to|because of|caused by) (?:a |the )?(?:lack of (?:memory|ram)|insufficient memory|not enough (?:memory|ram))\b|\bthe memory (?:is|was) not enough\b|\b(?:almost certainly|most likely|definitely)(?: means)? (?:an? )?[\x22'`]?(?:out of memory\b|out-of-memory (?:error|issue|problem)\b)|\bmeans (?:an? )?(?:out of memory\b|out-of-memory (?:error|issue|problem)\b)|\b(?:it's|it is|it was|this is|that's|that is) (?:an? )?(?:[\x22'`]?out of memory[\x22'`]? (?:error|issue|problem)\b|out-of-memory (?:error|issue|problem)\b)|(?:内存|memory)(?:不够|不足)|内存(?:爆|炸)了?))",
            "The thread says memory ran out ({claim})",
        )
    },
    Rule {
        extract: Some(extract_retold_killed),
        certainty: Possible,
        fix: Some(super::oom::SIGKILL_FIX),
        // As the shell prints it: healthy logs hold `killed` in every line.
        exact_case: true,
        ..rule(
            // The shell's `Killed` retold in quotes, after what the process did or
            // the writer got (`it simply returns \`Killed\``, `I'm getting a "Killed"
            // message`, `keeps ending with "Killed"`); who sent it is as unknown as
            // for the shell's own line.
            RETOLD_KILLED,
            C::OomKill,
            Warn,
            &["Killed"],
            // The claim is the quoted word alone: on a page (`The shell prints
            // \`Killed\``) it is mentioned, not met. Unquoted, the shell's word is
            // told right after a verb of telling (`It just states Killed, and no
            // other issue`) or of ending (`nix-env -u exited with Killed`).
            r"[\x22'`“]+(?P<claim>(?-i:Killed)(?::? 9)?)\.?[\x22'`”]+|\b(?:states?|stated|says|prints?|printed|shows?|showed|displays?|displayed|outputs?|(?:exits?|exited|ends?|ended|fails?|failed|dies|died) with):?\s+(?:just |only |simply )?(?P<told>(?-i:Killed))(?:\s*[,.;!]|\s*$)",
            "The report says the process was {claim}",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // `oomd killed httpd.service`, `killed by earlyoom`: a userspace killer named
            // as the one that killed; Slurm or a cluster's scheduler, with the memory it
            // killed for (`Job gets killed by SLURM due to out of memory`, `Aer job uses
            // too much memory on a hpc and is killed by scheduler`; a time limit kills
            // too).
            "prose.userspace-killer-claim",
            C::UserspaceOomKill,
            Warn,
            &[
                "oomd",
                "earlyoom",
                "killed by slurm",
                "killed by the slurm",
                "killed by scheduler",
                "killed by the scheduler",
                "killed by job scheduler",
                "killed by the job scheduler",
                "killed by batch scheduler",
                "killed by the batch scheduler",
                "lowmemorykiller",
                "low memory killer",
                "killed due to memory limit",
            ],
            r"(?i:(?P<claim>\b(?:systemd-oomd|oomd|earlyoom)\b (?:has |had |keeps |kept |is |was |just |then |also )?(?:killed|kills|killing|terminated)\b|\b(?:killed|terminated) by (?:the )?(?:systemd-oomd|oomd|earlyoom)\b|\bkilled by (?:the )?slurm\b(?: \w+)? (?:due to|for|because of|after) (?:\w+ ){0,3}?(?:memory|oom|ram)\b|\b(?:memory|ram)\b[^.\n]{0,80}?\bkilled by (?:the )?(?:job |batch )?scheduler\b|\bkilled by (?:the )?(?:job |batch )?scheduler\b(?: \w+)? (?:due to|for|because of|after) (?:\w+ ){0,3}?(?:memory|oom|ram)\b|\b(?:problem|culprit|cause)\s+(?:was|is)\s+(?:the\s+)?(?:systemd-oomd|oomd|earlyoom)\b|[`'\x22]?\b(?:lowmemorykiller|low memory killer)\b[`'\x22]? (?:has |had |then |just )?(?:killed|kills|killing|terminated)\b|\bjobs? (?:is|are|was|were|gets?|got) killed due to memory limits?\b))",
            "The report says a userspace OOM killer killed the process ({claim})",
        )
    },
    Rule {
        extract: Some(extract_claim),
        certainty: Possible,
        ..rule(
            // `once I max out my RAM and start using swap`, `it goes in the swap`, `My
            // swap file fills up and then Home Assistant hangs`, `rapid swap file
            // growth`, `caused excessive swapping`, `the kernel started swapping
            // heavily`, `it started to consume swap memory`, `utilize the swap memory …
            // and cause an incredibly slow system`, `memory and swap (zram) get gradually filled up`, `filling the
            // whole RAM and even swap file`.
            "prose.swap-claim",
            C::SwapThrashing,
            Warn,
            &[
                "using swap",
                "use swap",
                "using the swap",
                "use the swap",
                "swapping",
                "to swap",
                "in swap",
                "into swap",
                "in the swap",
                "into the swap",
                "swap fills",
                "swap file fills",
                "swap growth",
                "swap file growth",
                "and swap",
                "and even swap",
                "and the swap",
                "consume swap",
                "consume the swap",
                "consumed swap",
                "consumed the swap",
                "consuming swap",
                "consuming the swap",
                "utilize swap",
                "utilize the swap",
                "utilized swap",
                "utilized the swap",
                "utilizing swap",
                "utilizing the swap",
            ],
            r"(?i:(?P<claim>\b(?:excessive|heavy|constant|massive|intense)\s+swapping\b|\bswapping\s+(?:excessively|heavily|constantly|like crazy)\b|\b(?:max(?:es|ed)? out|fill(?:s|ed)? up|exhaust(?:s|ed)?|runs? out of|ran out of|uses? up|used up) (?:all )?(?:of )?(?:my |the )?(?:ram|memory)\b[^.\n]{0,40}\b(?:start(?:s|ed)?|begins?|began) (?:(?:using|to use) (?:the )?swap|swapping|to swap)\b|\b(?:goes|went|going|gets|got|pushing|pushes|pushed|spilling|spills|spilled) (?:in|into) (?:the )?swap\b|\b(?:it|system|machine|computer|pc|server|laptop) (?:then )?(?:starts?|started|begins?|began) (?:swapping|to swap)\b|\bswap(?: file)? (?:fills up|growth)\b|\b(?:ram|memory) and (?:the |even )?swap(?: file| space)?(?: \(\w+\))? (?:(?:get|gets|got|are|were|is|was) )?(?:\w+ly )?fill(?:s|ed|ing)? up\b|\bfill(?:s|ed|ing)? up (?:all (?:of )?(?:the |my )?|the (?:whole |entire )?)(?:ram|memory) and (?:even )?(?:the )?swap\b|\bfill(?:s|ed|ing)? (?:all (?:of )?(?:the |my )?|the (?:whole |entire )?)(?:ram|memory) and (?:even )?(?:the )?swap\b|\b(?:start(?:s|ed)?|begins?|began) (?:to )?(?:consum(?:e|ed|ing)|us(?:e|ing)|utiliz(?:e|ed|ing)) (?:the )?swap\b|\b(?:consum(?:e|ed|ing)|us(?:e|ing)|utiliz(?:e|ed|ing)) (?:the )?swap(?: memory| space| disk| file)?\b[^.\n]{0,60}?\b(?:slow|hang|freez|unresponsive|crawl)\w*))",
            "The report says the machine went into swap ({claim})",
        )
    },
];

/// The words a claim rule captured as `claim`.
pub(super) fn claim(out: &[(String, String)]) -> Option<&str> {
    out.iter()
        .find(|(k, _)| k == "claim")
        .map(|(_, v)| v.as_str())
}

/// The claim's sentence: from the end of the one before to its own end, as (start of
/// the sentence, where the claim is, end of the sentence) in `msg`.
pub(super) fn sentence_of(msg: &str, claim: &str) -> Option<(usize, usize, usize)> {
    // A task list's item makes no claim, whatever it names.
    if is_a_task(msg) {
        return None;
    }
    // The claim is a capture of `msg` itself.
    let at = msg.find(claim)?;
    let ends = ['.', '!', '?', ';', '。', '！', '？', '；'];
    // A full stop inside a word (`beam.smp`, `v1.2`) ends no sentence.
    let ends_at = |i: usize, c: char| {
        ends.contains(&c)
            && (c != '.'
                || msg[i + 1..]
                    .chars()
                    .next()
                    .is_none_or(|n| n.is_whitespace() || n == '.'))
    };
    // After the end's own bytes: `。` is three.
    let start = msg[..at]
        .char_indices()
        .rfind(|&(i, c)| ends_at(i, c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    // A claim may hold an end of its own (`… on that box? That memory was
    // increasing`): its sentence ends after it.
    let after = at + claim.len();
    let end = msg[after..]
        .char_indices()
        .find(|&(i, c)| ends_at(after + i, c))
        .map_or(msg.len(), |(i, _)| after + i);
    Some((start, at, end))
}

// The rules' `Extractor` type takes the Vec these only read.
#[allow(clippy::ptr_arg)]
pub(super) fn extract_claim(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    claim_stands(msg, out)
}

/// A claim its clause neither denies nor supposes, and that no question asks: `the
/// first command finishes without any problems, but the second … before being
/// terminated by OOM killer` denies the first command's trouble, not the kill.
pub(super) fn claim_stands(msg: &str, out: &[(String, String)]) -> bool {
    clause_stands(msg, out, true)
}

/// [`claim_stands`], reading for a denial the claim's own words too, or (`read_claim`
/// false) only the words around it, where the claim itself may say `not` (`not enough
/// memory`).
fn clause_stands(msg: &str, out: &[(String, String)], read_claim: bool) -> bool {
    let (Some(told), Some((clause, _, _))) = (claim(out), clause_of_claim(msg, out, true)) else {
        return false;
    };
    let read = if read_claim {
        clause
    } else {
        clause.replacen(told, " ", 1)
    };
    !denied(&read.to_lowercase()) && !claim_asked(msg, told)
}

/// A thread's word of a cause (memory ran out, shared memory was too small), where the
/// words around it neither deny nor suppose it and no question asks it.
#[allow(clippy::ptr_arg)]
pub(super) fn extract_told(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    clause_stands(msg, out, false)
}

/// A markdown task list's item (`- [ ] Comm errors/segfaults related to …`): work to
/// do or done, not a failure met.
fn is_a_task(msg: &str) -> bool {
    let item = msg.trim_start();
    let item = item
        .strip_prefix("- ")
        .or_else(|| item.strip_prefix("* "))
        .unwrap_or("");
    ["[ ]", "[x]", "[X]"]
        .iter()
        .any(|box_| item.starts_with(box_))
}

/// A quoted `Killed` after what the process did or the writer got (`it simply
/// returns`, `I'm getting a`, `keeps ending with`), or one told unquoted (`It just
/// states Killed`), in a claim that stands.
#[allow(clippy::ptr_arg)]
fn extract_retold_killed(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    static TOLD: OnceLock<Option<Regex>> = OnceLock::new();
    if let Some(told) = out.iter().position(|(k, _)| k == "told") {
        let (_, word) = out.remove(told);
        out.push(("claim".to_string(), word));
        return claim_stands(msg, out);
    }
    // The claim's own place: the first `Killed` in quotes (a line may also hold the
    // kernel's `Killed process`).
    let Some(at) = claim(out).and_then(|c| {
        msg.match_indices(c)
            .map(|(i, _)| i)
            .find(|&i| msg[..i].ends_with(['"', '\'', '`', '“']))
    }) else {
        return false;
    };
    matches(
        &TOLD,
        r"(?i)\b(?:get|gets|getting|got|returns?|returned|says?|said|prints?|printed|shows?|showed|displays?|displayed|ends?|ending|ended|crash(?:es|ed)?|dies|died|fails?|failed|exits?|exited|terminated|stops?|stopped|was|were|there (?:is|was)|output|see|saw|status)\b(?: \w+){0,3}? [\x22'`“]+$",
        &msg[..at],
    ) && claim_stands(msg, out)
}

/// A crash the writer claims, in a statement or in a question that asks why it
/// happens (`why charon crashes due to SIGBUS?`): asking why takes the crash as given.
#[allow(clippy::ptr_arg)]
pub(super) fn extract_crash_claim(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let Some((start, _, end)) = claim(out).and_then(|c| sentence_of(msg, c)) else {
        return false;
    };
    let sentence = msg[start..end].to_lowercase();
    // `Could you check why it crashes` requests; what follows `why` is the claim.
    match sentence.find("why ") {
        Some(why) => !denied(&sentence[why..]),
        None => !denied(&sentence) && !is_question(msg, end),
    }
}

/// A claim that memory is not given back, whose own words deny: what stands is the
/// clause before it, which must neither deny nor suppose (`if memory is not freed`),
/// and no question asks it.
#[allow(clippy::ptr_arg)]
fn extract_unfreed_claim(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    let Some((start, at, end)) = claim(out).and_then(|c| sentence_of(msg, c)) else {
        return false;
    };
    let before = without_asides(&msg[start..at]);
    !denied(&before[clause_start(&before)..].to_lowercase()) && !is_question(msg, end)
}

/// Whether the sentence of `msg` that holds `claim` asks about it ([`asked`]); a
/// claim not found in `msg` is asked about by no sentence of it.
fn claim_asked(msg: &str, claim: &str) -> bool {
    sentence_of(msg, claim)
        .is_some_and(|(start, at, end)| asked(msg, start, at..at + claim.len(), end))
}

/// Where the last clause of `before` (the words before a claim) begins.
fn clause_start(before: &str) -> usize {
    CLAUSE_BREAKS
        .iter()
        .filter_map(|b| before.rfind(b).map(|i| i + b.len()))
        .max()
        .unwrap_or(0)
}

/// The sentence that ends at `end` in `msg` is a question; not a doubt in brackets that
/// the sentence goes on after (`is called with (any?) .wav file`), where `Is this a
/// leak (in PyTorch?)` still asks.
fn is_question(msg: &str, end: usize) -> bool {
    let doubt_in_brackets = msg[end..].strip_prefix("?)").is_some_and(|rest| {
        rest.trim_start()
            .starts_with(|c: char| c.is_alphanumeric() || c == '`')
    });
    msg[end..].starts_with(['?', '？']) && !doubt_in_brackets
}

/// The question that ends at `end` asks about the claim at `claim` (`Is this a memory
/// leak, and how can I fix it?`): unless the sentence states the claim and a later
/// clause turns to what to do about it (`Memory Leak현상이 발생하는데 혹시 어떻게
/// 해결하셨나요?`, a leak occurs, how did you solve it?; `memory keeps growing, any idea
/// why?`), which takes the claim as given.
/// The sentence runs from `start` to `end` in `msg` ([`sentence_of`]).
fn asked(msg: &str, start: usize, claim: std::ops::Range<usize>, end: usize) -> bool {
    static YES_OR_NO: OnceLock<Option<Regex>> = OnceLock::new();
    static WHAT_TO_DO: OnceLock<Option<Regex>> = OnceLock::new();
    if !is_question(msg, end) {
        return false;
    }
    let opens_a_yes_or_no = msg.get(start..claim.start).is_some_and(|before| {
        matches(
            &YES_OR_NO,
            r"(?i)^\s*(?:is|are|does|do|did|can|could|was|were|has|have|should|will|would)\b",
            before,
        )
    });
    opens_a_yes_or_no
        || !msg.get(claim.end.min(end)..end).is_some_and(|rest| {
            matches(
                &WHAT_TO_DO,
                r"(?i)(?:[,，]|는데|지만)\s*(?:[^,，]{0,24}?)(?:\bhow (?:can|do|did|should|to|could)\b|\bwhat (?:can|should|could)\b|\bany (?:ideas?|solutions?|fix|workarounds?|suggestions?|hints?)\b|\bis there (?:a|any) (?:way|fix|solution|workaround)\b|어떻게|해결|怎么|如何|どうすれば)",
                rest,
            )
        })
}

/// A rise the sentence says lasts (`constantly`, `over time`, `still`, `until it
/// crashes`, `after each call`, `never goes down`) or ends in a failure (`climbs to >100Gb
/// and the server becomes unresponsive`), and that stands
/// ([`rise_stands`]).
#[allow(clippy::ptr_arg)]
fn extract_rising_memory(msg: &str, out: &mut Vec<(String, String)>) -> bool {
    static LASTS: OnceLock<Option<Regex>> = OnceLock::new();
    let Some((start, _, end)) = claim(out).and_then(|c| sentence_of(msg, c)) else {
        return false;
    };
    matches(
        &LASTS,
        r"(?i)over time|with time|\bnever (?:back )?down\b|\bonly (?:grow|increas|rise|goes up|climb)\w*|constantly|continu\w*|steadily|gradually|slowly|never (?:goes|go|comes|drops|decreas\w*|releas\w*|recedes?)|(?:doesn'?t|does not|don'?t|didn'?t|did not|won'?t) (?:go|come|drop)(?: back)? down|not (?:be )?released|\buntil\b|every (?:\w+ )?(?:time|request|epoch|step|iteration|call|day|hour|minute|second)|each (?:time|request|epoch|step|iteration|call|run)|after each|per (?:request|epoch|step|hour|day)|day by day|indefinitely|without (?:bound|limit)|monoton\w*|linear\w*|increasingly|progressively|\balways\b|ever[- ]?increasing|more and more|\bkeeps?\b|\bkept\b|\bstill\b|constantemente|sin parar|no desciende|sans cesse|toujours|\b(?:while|during|throughout) (?:the )?(?:training|running|inference|rendering|indexing|processing)\b|\bwhile (?:the |it |my |our )?(?:\w+ )?(?:runs|is running|are running)\b|\b(?:began|begins|starts?|started) to (?:increase|grow|rise|climb)|\b(?:unbounded|unlimited|uncontrolled|runaway|steady|constant|consistent|gradual)\b|\bwithout (?:stop|end)\w*|\brepeated\w*|\bupon (?:each|every)\b|quickly|rapidly|\bat (?:a )?rate (?:of |\d)|\bas time (?:goes on|goes by|go(?:es)? by|pass(?:es)?(?: by)?|went by)\b|\b(?:over|for (?:about |almost |nearly |over |more than )?)\d+ (?:hours|days|weeks)\b|\breach(?:es|ed)? (?:to )?(?:its|the) (?:max\w*|limit)|\b(?:eat|fill)(?:s|ing)? (?:up )?(?:all|the whole|the entire|whole)\b|\band (?:then )?(?:the \w+ |it |everything )?(?:becomes|became|gets|got|goes|went) unresponsive\b|\band (?:then )?(?:the \w+ |it )?(?:crash(?:es|ed)?|freez(?:es|ed)|hang(?:s|ed)?|dies|died)\b",
        &msg[start..end],
    ) && rise_stands(msg, out)
}

/// Where one clause of a sentence ends and the next begins.
const CLAUSE_BREAKS: &[&str] = &[
    ",",
    "，",
    ";",
    " but ",
    " and ",
    " while ",
    " whereas ",
    " however ",
    " because ",
    " since ",
    " so ",
];

/// `text` without what it puts in parentheses.
fn without_asides(text: &str) -> String {
    let mut depth = 0usize;
    text.chars()
        .filter(|c| {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    return false;
                }
                _ => {}
            }
            depth == 0
        })
        .collect()
}

/// `as you can see` points the reader at what follows; it supposes nothing (`can`
/// would read as a supposition).
fn without_pointers(mut text: String) -> String {
    for phrase in ["as you can see", "as you can tell", "as can be seen"] {
        while let Some(i) = text.to_ascii_lowercase().find(phrase) {
            text.replace_range(i..i + phrase.len(), "");
        }
    }
    text
}

/// Where, in the words after a claim, a condition on it begins (`segfaults if the file
/// is missing`, `has a memory leak when audio interfaces are reset`) or its manner
/// (`gets "killed" without any other error messages`): what follows says when or how
/// it happens, and its own `not`, `any` or `if` denies nothing of the claim; so in
/// the languages of Europe (`fallisce con un core dump nel momento in cui … si preme`).
fn condition_at(after: &str) -> usize {
    static CONDITION: OnceLock<Option<Regex>> = OnceLock::new();
    static READER: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(condition) = lazy_regex(
        &CONDITION,
        r"(?i)\b(?:if|when|whenever|once|every time|without|si|se|quando|cuando|quand|lorsque|wenn|wanneer|nel momento)\b",
    )
    .and_then(|re| re.find(after)) else {
        return after.len();
    };
    // `segfaults if you pass it a NULL pointer`: a condition put to the reader is a
    // page's supposition, which its `if` still denies.
    if matches(
        &READER,
        r"(?i)\b(?:you|your)\b",
        &after[condition.start()..],
    ) {
        return after.len();
    }
    condition.start()
}

/// The clause of the sentence that holds the claim (its capture `claim`), up to the
/// claim's end or, `to_its_end`, to the clause's (`メモリを解放していない`, `might
/// be the symptom` deny after the claim), with the sentence's start and end in
/// `msg`. An aside in parentheses (`memory usage (RAM, not GPU memory) kept
/// increasing`) is no clause of its own.
fn clause_of_claim(
    msg: &str,
    out: &[(String, String)],
    to_its_end: bool,
) -> Option<(String, usize, usize)> {
    let claim = claim(out)?;
    let (start, at, end) = sentence_of(msg, claim)?;
    let before = without_pointers(without_asides(&msg[start..at]));
    let claim_alone = if to_its_end {
        let mut rest = without_asides(&msg[at..end]);
        if let Some(after) = rest.strip_prefix(claim) {
            rest.truncate(claim.len() + condition_at(after));
        }
        rest
    } else {
        without_asides(claim)
    };
    let claim_end = CLAUSE_BREAKS
        .iter()
        .filter_map(|b| claim_alone.find(b))
        .min()
        .unwrap_or(claim_alone.len());
    let clause = format!(
        "{} {}",
        &before[clause_start(&before)..],
        &claim_alone[..claim_end]
    );
    Some((clause, start, end))
}

/// A rise of memory the text tells (its capture `claim`) in a clause no word denies,
/// supposes or fixes (`if memory keeps growing`, `memory should not increase`, `the
/// fix stops memory from growing`), not asked about, and no rise with a workload's
/// size (`memory grows linearly with the batch size`). The denial is read in the
/// claim's own clause: `RVIZ did not crash but its memory usage was ever increasing`
/// denies the crash, not the rise. `Would` is no denial: it is also the past's habit
/// (`memory would continue to grow until the process restarts`), nor is an `if` the
/// writer saw come true (`I'm noticing if I leave OctoPrint running for a few hours
/// its memory increases`). Nor is a rise that falls back to a figure in the same
/// sentence (`starts growing about 1MB/s until it reaches ~133MB and falls back to
/// ~70MB`): a collector's sawtooth, unless a restart or a kill brought it down.
pub(super) fn rise_stands(msg: &str, out: &[(String, String)]) -> bool {
    static DENIES: OnceLock<Option<Regex>> = OnceLock::new();
    static SCALES: OnceLock<Option<Regex>> = OnceLock::new();
    static FALLS_BACK: OnceLock<Option<Regex>> = OnceLock::new();
    static RESTARTS: OnceLock<Option<Regex>> = OnceLock::new();
    static SEEN_IF: OnceLock<Option<Regex>> = OnceLock::new();
    static SUPPOSES: OnceLock<Option<Regex>> = OnceLock::new();
    static REPRO: OnceLock<Option<Regex>> = OnceLock::new();
    let Some((mut clause, start, end)) = clause_of_claim(msg, out, false) else {
        return false;
    };
    if let Some(seen) = lazy_regex(
        &SEEN_IF,
        r"(?i)\b(?:i|we)(?:'m| am|'re| are|'ve| have)? (?:been |also )?(?:notic\w+|observ\w+|seeing|found|find) (?:that )?(?:if|when|whenever)\b",
    )
    .and_then(|re| re.find(&clause))
    {
        clause.replace_range(seen.range(), "");
    }
    // `the memory usage will keep on rising` tells what the writer's snippet does each
    // time it runs, where the sentence supposes nothing (`If you disable eviction, the
    // memory usage will keep growing`) but of that snippet (`If you set it to 100000
    // (like it is in the snippet), …`); `will` alone still supposes.
    let sentence = &msg[start..end];
    let of_the_repro = matches(
        &REPRO,
        r"(?i)\b(?:the|this|my|our) (?:snippet|repro\w*|script|example code)\b",
        sentence,
    );
    if of_the_repro
        || !matches(
            &SUPPOSES,
            r"(?i)\b(?:if|unless|without|otherwise)\b",
            sentence,
        )
    {
        for habit in ["will keep on ", "will keep ", "will continue to "] {
            if let Some(i) = clause.to_ascii_lowercase().find(habit) {
                clause.replace_range(i..i + habit.len(), "");
            }
        }
    }
    let sawtooth = matches(
        &FALLS_BACK,
        r"(?i)\b(?:and|then|before|it)\s+(?:\w+ly\s+)?(?:falls?|fell|drops?|dropped|goes|went|comes|came) back (?:down )?to\s*[~≈]?\s*\d",
        sentence,
    ) && !matches(
        &RESTARTS,
        r"(?i)\b(?:restart\w*|oom|kill\w*|crash\w*)\b",
        sentence,
    );
    !matches(
        &DENIES,
        r"(?i)\b(?:no|not|never|if|whether|unless|may|might|could|should|can|will|expected|normal|avoid\w*|prevent\w*|stops?|fix\w*|how to|such as|e\.g|reduc\w*|decreas\w*|si|no es|pas)\b|n't\b|\bin (?:situations|cases) (?:when|where)\b",
        &clause,
    ) && !matches(
        &SCALES,
        r"(?i)\b(?:increas\w*|grow\w*|scales?)\b[^.]{0,20}\b(?:with|proportional(?:ly)? to) (?:the )?(?:batch|number|size|sequence|context|model|input|length|resolution|count)",
        sentence,
    ) && !sawtooth
        && !settles(sentence)
        && !claim(out).is_some_and(|told| claim_asked(msg, told))
}

/// A rise the same sentence says stops (`grows slightly over time …, but eventually
/// plateaus`): a cache or a heap that found its size, not a leak.
fn settles(sentence: &str) -> bool {
    static SETTLES: OnceLock<Option<Regex>> = OnceLock::new();
    matches(
        &SETTLES,
        r"(?i)\b(?:but|then|and|until it|before it)\s+(?:\w+ly\s+)?(?:plateau\w*|stabili[sz]\w*|levels? off|levell?ed off|flattens?(?: out)?|flattened(?: out)?)\b",
        sentence,
    )
}

/// Words that deny, suppose (`might be the symptom`, `may end up getting OOM killed`,
/// `leads me to guess that …`, `decides to segfault or something`, `killed by OOM or some
/// issue`, `感觉应该是内存爆了`,
/// I feel it must be memory blowing up), avoid, fix or
/// generalise what the sentence names, in the languages reports are written in.
fn denied(sentence: &str) -> bool {
    static DENIED: OnceLock<Option<Regex>> = OnceLock::new();
    // `no matter how much memory it gets` concedes, and denies nothing.
    let sentence = sentence.replace("no matter", "");
    matches(
        &DENIED,
        r"\b(?:no|not|never|without|any|if|whether|unless|may|might|could|can|guess\w*|wonder\w*|maybe|perhaps|avoid\w*|prevent\w*|fix|fixe[sd]|fixing|how to|how do|common|typical|such as|e\.g|indicat\w*|or something|or whatever|or some|pas|sans|aucune?|si|ni|nie|bez|ne|nein|kein\w*|nicht|ohne|sin|ningún|ninguna|não|sem|nessun\w*|senza|niet|geen|zonder|не|нет|без|değil|yok|không|tidak|bukan|nincs|nu|fără|δεν|χωρίς|ingen|inte|ikke|ei|لا|ليس|بدون|نه|בלי|לא|नहीं|ไม่)\b|n't\b|不是|没有|沒有|場合|正常|无|無|未|感觉|可能|也许|或许|猜|なし|ない|없|않",
        &sentence,
    )
}
