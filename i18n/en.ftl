# Anteroom's visitor-facing strings: English, the reference language.
# Every other language has exactly these messages with the same variables
# (src/domain/i18n/catalog.rs checks it at start-up and in its tests).
# Variables: $n (a count), $m (minutes), $t, $low, $high, $median (durations already
# written out), $time, $open (times), $room, $origin, $url, $draw, $rank, $ok (text).
# Plural forms use the CLDR categories of the language (zero, one, two, few, many, other).

## About the language itself (the language switch, /api/languages, <html dir>).
language-name = English
# ltr or rtl
language-direction = ltr

## The page, the widget and the error pages.
# The language switch (its aria-label).
language-label = Language
waiting-room = Waiting room
title-queued = You're in line
lead-queued = Thanks for waiting. We let people in strictly in the order they arrived, and this page updates by itself.
lead-queued-lanes = Thanks for waiting. We let people in in the order they arrived, with a set share of places for priority lanes, and this page updates by itself.
footer-lanes = Fair: first come, first served within each lane. Powered by Anteroom.
title-paused = The line is paused
lead-paused = Admissions are paused for a moment. You keep your place; the numbers start moving again as soon as they resume.
title-sold-out = Sold out
lead-sold-out = Everything available has been taken for now. If more become available, this page joins the line for you by itself; keep it open.
lead-sold-out-kept = Everything available has been taken for now. You keep your place in case more become available, and this page moves on by itself.
title-closed = This waiting room is closed
lead-closed = The organiser has closed this waiting room for now. Keep this page open: it joins the line for you by itself as soon as the room opens.
lead-closed-kept = The organiser has closed this waiting room for now. You keep your place in line, and this page moves on by itself when it opens again.
title-rejected = This sale is not admitting anyone
lead-rejected = The organiser is not letting anyone in or into the line right now. Keep this page open: it joins the line for you by itself as soon as the sale admits again.
lead-rejected-kept = The organiser is not letting anyone in right now. You keep your place in line, and this page moves on by itself when the sale admits again.
title-scheduled = The line has not opened yet
lead-scheduled = This sale has a set start time. Keep this page open: it joins the line for you by itself as soon as the line opens.
title-prequeue = You're in the pre-queue
lead-prequeue = When the sale opens, everyone in the pre-queue is put in a random order, so there is no need to reload or to have arrived first. Keep this page open: it moves into the line by itself at the opening.
title-event-ended = This sale has ended
lead-event-ended = The sale this waiting room was for is over, and the line is closed. Thank you for waiting.
title-not-queued = You're no longer in line
lead-not-queued = The organiser emptied the line (or removed your place), so you are no longer waiting. You can join again at the back of the line.
title-no-show = You missed your turn
lead-no-show = You were let in, but did not reach the site within the time allowed, so your place went to the next person in line. You can join again at the back of the line.
title-admitted = It's your turn
lead-admitted = Taking you there now…
continue-link = Continue
rejoin = Join the line
position-label = Your place in line
ahead-many =
    { $n ->
        [one] { $n } person ahead of you
       *[other] { $n } people ahead of you
    }
ahead-none = You're next!
ahead-none-paused = No one is ahead of you
in-line = { $n } in line
in-line-label = People in line
announce-place = You are now number { $n } in line.
eta-label = Estimated wait
eta-range = { $low } – { $high }
eta-minutes-range = { $low }–{ $high } min
eta-up-to = up to { $t }
eta-under-minute = under a minute
eta-minutes = { $n } min
eta-hours = { $n } h
eta-unknown = working it out…
eta-went-up = The estimate went up: people ahead of you are taking longer than usual.
eta-went-down = Good news: the line is moving faster than expected.
eta-explain = Based on how long people have been staying once let in, and how many places free up.
you-were-away =
    { $n ->
        [one] You were away for longer than { $n } second, so you lost your place and joined the line again at the back.
       *[other] You were away for longer than { $n } seconds, so you lost your place and joined the line again at the back.
    }
eta-at-most = not known yet (at most { $t })
eta-at-most-minute = not known yet (under a minute)
eta-paused = on hold while the line is paused
reason-capacity-lowered = The organiser is letting fewer people in at a time, so the wait is longer.
reason-capacity-raised = The organiser is letting more people in at a time, so the wait is shorter.
reason-paused = The line is paused, so there is no countdown. You keep your place.
reason-resumed = The line is moving again.
reason-rate-limited = People are let in at a fixed pace per minute; the estimate follows that pace.
reason-sessions-longer = People who were let in are staying longer than usual, so the line moves more slowly.
reason-sessions-shorter = People who were let in are leaving sooner than usual, so the line moves faster.
reason-places-restored = The waiting room recovered from a fault; you kept your place.
reason-stock-may-run-out = Fewer items are left than people ahead of you: it may sell out before your turn. You keep your place in case more are added.
reason-priority-lanes = This line has priority lanes: people in them are let in alongside it, so your place can move back a little as they arrive.
reason-origin-busy = The site is under strain, so fewer people are let in at a time until it recovers; the wait is longer.
progress-label = Progress through the line
keep-open =
    { $n ->
        [one] Keep this tab open. If you leave, we hold your place for { $n } second.
       *[other] Keep this tab open. If you leave, we hold your place for { $n } seconds.
    }
keep-open-hidden =
    { $m ->
        [one] If you only switch tabs or lock your phone, we hold it for { $m } minute.
       *[other] If you only switch tabs or lock your phone, we hold it for { $m } minutes.
    }
live = Live
updated-at = updated { $t }
support-code = Support code
connecting = Connecting…
reconnecting = Reconnecting… your place is held for as long as the note below says.
polling = Live updates are blocked here; checking every few seconds instead.
noscript = This page refreshes itself every 20 seconds.
notify-button = Notify me when it's my turn
notify-on = We'll send a notification when it's your turn.
notify-denied = Notifications are blocked in this browser; keep the tab open.
notify-title = It's your turn!
notify-body = Your place at { $room } is ready.
tab-title-admitted = ✅ Your turn — { $room }
footer = Fair, first come first served. Powered by Anteroom.
err-unknown-room = No such waiting room
err-unknown-room-lead = Check the link you followed; this waiting room does not exist.
err-rate-limited = Too many requests
err-rate-limited-lead =
    { $n ->
        [one] This page was reloaded too often. You keep your place; it tries again by itself in { $n } second.
       *[other] This page was reloaded too often. You keep your place; it tries again by itself in { $n } seconds.
    }
retrying-in = Trying again in { $n } s…
err-not-found = Nothing here
err-not-found-lead = This address is not a waiting room. If a site sent you here, check the link it gave you.
err-unavailable = We'll be right back
err-unavailable-lead = The waiting room is having trouble right now. Please reload in a few seconds; you keep your place.
err-restoring = The line is being restored
err-restoring-lead = The waiting room's store restarted, and the places people already held are being put back first. New places open again in a moment; this page tries again by itself.
err-not-embeddable = Not available here
gw-need-pass = This page is behind a waiting room
gw-need-pass-lead = Join the queue to continue; you will be let in when it is your turn.
gw-join-queue = Join the queue
gw-refused = The site is not answering
gw-refused-lead = The site behind this address refused the connection. Please try again in a moment.
gw-timeout = The site took too long to answer
gw-timeout-lead = The site behind this address did not answer in time. Please try again in a moment.
gw-bad-request = This address cannot be read
gw-bad-request-lead = The address has a form that sites read in different ways (an encoded '/', a '\', a '.' or '..' part). Please use the site's own links.
err-not-embeddable-lead = This waiting room may not be embedded on this site.
pow-title = Checking your browser
pow-lead = This takes a few seconds and keeps bots from taking places. You join the line as soon as it is done (JavaScript is needed).
pow-progress = Checking your browser… { $n } %
pow-failed = Your browser could not finish the check. Reload the page to try again.
err-places = Your network already has its places in this line
err-places-lead = Someone on the same network (an office, a school, a mobile network) already holds as many places as this line allows per network. Try again once one of them has been let in.
err-entry = This line needs an invitation from the site
err-entry-lead = Open the waiting room from the site's own link (sign in there first). The link you followed has no invitation, or it has expired or is for another line.
try-again = Try again

## A launch-day drop (a room with opens_at).
drop-lead-scheduled = The line opens at { $time }. Keep this page open: it joins the line for you by itself; there is no need to reload.
drop-lead-prequeue = At { $time } everyone here gets a random place; joining earlier does not help. Keep this page open: it moves into the line by itself.
drop-lead-queued-drop = Thanks for waiting. Places were drawn at random for everyone in the pre-queue, and those who came later queue behind them in arrival order. This page updates by itself.
drop-footer-drop = Fair: a draw anyone can check, then first come, first served. Powered by Anteroom.
drop-countdown-label = Opens in
drop-countdown-now = Opening now…
drop-unit-hours = h
drop-unit-minutes = min
drop-unit-seconds = s
drop-fair-summary = How was my place decided?
drop-fair-explain = When the pre-queue opened, this sale published a commitment: the SHA-256 of a secret random seed. At the opening it revealed the seed, and everyone in the pre-queue was put in order by HMAC-SHA256(seed, their visitor id). This page checks your own place here, in your browser.
drop-fair-checking = Checking…
drop-fair-result = Your draw: { $draw }…; rank { $rank } of { $n }; commitment matches: { $ok }
drop-fair-yes = yes
drop-fair-no = no
drop-fair-not-in = Your draw { $draw }… is not among the pre-queue's: you joined after the opening, so your place is by arrival.
drop-fair-mismatch = The revealed seed does not match the commitment published before the opening.
drop-fair-unavailable = This browser cannot run the check (it needs Web Crypto on a secure page). The record is at { $url }.
drop-fair-failed = The check could not be completed: the fairness record could not be read. Trying again in a few seconds.

## What a visitor is told beyond the states: random mode, notes, outage pages.
told-title-queued-random = You're in the draw
told-lead-queued-random = Each time a place frees up, one person is picked at random from everyone waiting. Arriving earlier or reloading makes no difference. This page updates by itself.
told-footer-random = Fair: a random draw among everyone waiting. Powered by Anteroom.
told-chances-label = Your chances
told-chances =
    { $n ->
        [one] The { $n } person waiting now is let in within about { $median }; 1 in 20 within { $low }, 19 in 20 within { $high }.
       *[other] About half of the { $n } people waiting now are let in within { $median }; 1 in 20 within { $low }, 19 in 20 within { $high }.
    }
told-chances-unknown = Not known yet: everyone waiting now is let in within at most { $t }.
told-chances-paused = On hold while the draw is paused.
told-note-random-draw = There is no place in this line: everyone waiting has the same chance at each draw, whenever they arrived. The chances are the same for everyone and change as people join and leave.
told-note-any-time-before = Arriving any time before { $open } is equally good: the pre-queue opens at { $time }, and at { $open } everyone in it is put in a random order. There is no need to be here the second it opens.
told-fair-rank-explain = The rank is your draw among everyone in the pre-queue at the opening; your place counts only the people still waiting ahead of you, so it is lower once some of them have been let in.
told-not-live = Not live: no update since { $t }. Trying again…
told-dismiss = Got it
told-err-unavailable-newcomer = The waiting room is having trouble right now, so you could not join the line yet. This page tries again by itself.
told-err-unavailable-kept = The waiting room is having trouble right now. If you already had a place in line, you keep it. This page tries again by itself.
told-err-places-retry = Someone on the same network (an office, a school, a mobile network) already holds as many places as this line allows per network. A place frees up when one of them is let in; this page tries again by itself.
told-pow-noscript = This waiting room checks your browser with a short calculation before you join the line, and that needs JavaScript. Turn JavaScript on for this site, then reload this page.
told-embed-refused-title = This waiting room cannot be shown here
told-embed-refused = The waiting room “{ $room }” does not allow being embedded on { $origin }. If this is your site, add { $origin } to the room's embed_origins.
