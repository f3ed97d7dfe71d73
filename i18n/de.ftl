# Anteroom's visitor-facing strings: German (de). See en.ftl.

language-name = Deutsch
language-direction = ltr

language-label = Sprache
waiting-room = Warteraum
title-queued = Sie sind in der Warteschlange
lead-queued = Danke fürs Warten. Wir lassen alle streng in der Reihenfolge ihrer Ankunft ein, und diese Seite aktualisiert sich von selbst.
lead-queued-lanes = Danke fürs Warten. Wir lassen alle in der Reihenfolge ihrer Ankunft ein, mit einem festen Anteil an Plätzen für Vorrangspuren, und diese Seite aktualisiert sich von selbst.
footer-lanes = Fair: Wer zuerst kommt, kommt zuerst dran – innerhalb jeder Spur. Bereitgestellt von Anteroom.
title-paused = Die Warteschlange ist pausiert
lead-paused = Der Einlass ist kurz angehalten. Sie behalten Ihren Platz; die Zahlen bewegen sich wieder, sobald es weitergeht.
title-sold-out = Ausverkauft
lead-sold-out = Alles Verfügbare ist vorerst vergeben. Wird mehr verfügbar, reiht sich diese Seite von selbst für Sie ein; lassen Sie sie geöffnet.
lead-sold-out-kept = Alles Verfügbare ist vorerst vergeben. Sie behalten Ihren Platz, falls mehr verfügbar wird, und diese Seite geht von selbst weiter.
title-closed = Dieser Warteraum ist geschlossen
lead-closed = Der Veranstalter hat diesen Warteraum vorerst geschlossen. Lassen Sie diese Seite geöffnet: Sie reiht sich von selbst für Sie ein, sobald der Raum öffnet.
lead-closed-kept = Der Veranstalter hat diesen Warteraum vorerst geschlossen. Sie behalten Ihren Platz in der Warteschlange, und diese Seite geht von selbst weiter, wenn er wieder öffnet.
title-rejected = Dieser Verkauf lässt niemanden ein
lead-rejected = Der Veranstalter lässt gerade niemanden ein oder in die Warteschlange. Lassen Sie diese Seite geöffnet: Sie reiht sich von selbst für Sie ein, sobald der Verkauf wieder einlässt.
lead-rejected-kept = Der Veranstalter lässt gerade niemanden ein. Sie behalten Ihren Platz in der Warteschlange, und diese Seite geht von selbst weiter, wenn der Verkauf wieder einlässt.
title-scheduled = Die Warteschlange ist noch nicht geöffnet
lead-scheduled = Dieser Verkauf hat eine feste Startzeit. Lassen Sie diese Seite geöffnet: Sie reiht sich von selbst für Sie ein, sobald die Warteschlange öffnet.
title-prequeue = Sie sind in der Vorwarteschlange
lead-prequeue = Wenn der Verkauf startet, werden alle in der Vorwarteschlange in eine zufällige Reihenfolge gebracht – Neuladen oder frühes Kommen ist also nicht nötig. Lassen Sie diese Seite geöffnet: Sie wechselt bei der Öffnung von selbst in die Warteschlange.
title-event-ended = Dieser Verkauf ist beendet
lead-event-ended = Der Verkauf, für den dieser Warteraum gedacht war, ist vorbei, und die Warteschlange ist geschlossen. Danke fürs Warten.
title-not-queued = Sie sind nicht mehr in der Warteschlange
lead-not-queued = Der Veranstalter hat die Warteschlange geleert (oder Ihren Platz entfernt), daher warten Sie nicht mehr. Sie können sich am Ende der Warteschlange wieder anstellen.
title-no-show = Sie haben Ihren Zug verpasst
lead-no-show = Sie wurden eingelassen, haben die Website aber nicht in der erlaubten Zeit erreicht, daher ging Ihr Platz an die nächste Person in der Warteschlange. Sie können sich am Ende wieder anstellen.
title-admitted = Sie sind dran
lead-admitted = Wir leiten Sie jetzt weiter…
continue-link = Weiter
rejoin = Anstellen
position-label = Ihr Platz in der Warteschlange
ahead-many =
    { $n ->
        [one] { $n } Person vor Ihnen
       *[other] { $n } Personen vor Ihnen
    }
ahead-none = Sie sind als Nächstes dran!
ahead-none-paused = Niemand ist vor Ihnen
in-line = { $n } in der Warteschlange
in-line-label = Personen in der Warteschlange
announce-place = Sie sind jetzt Nummer { $n } in der Warteschlange.
eta-label = Geschätzte Wartezeit
eta-range = { $low } – { $high }
eta-minutes-range = { $low }–{ $high } Min.
eta-up-to = bis zu { $t }
eta-under-minute = unter einer Minute
eta-minutes = { $n } Min.
eta-hours = { $n } Std.
eta-unknown = wird berechnet…
eta-went-up = Die Schätzung ist gestiegen: Die Personen vor Ihnen brauchen länger als üblich.
eta-went-down = Gute Nachricht: Die Warteschlange bewegt sich schneller als erwartet.
eta-explain = Beruht darauf, wie lange Eingelassene bleiben und wie viele Plätze frei werden.
you-were-away =
    { $n ->
        [one] Sie waren länger als { $n } Sekunde weg, haben daher Ihren Platz verloren und sich am Ende wieder angestellt.
       *[other] Sie waren länger als { $n } Sekunden weg, haben daher Ihren Platz verloren und sich am Ende wieder angestellt.
    }
eta-at-most = noch unbekannt (höchstens { $t })
eta-at-most-minute = noch unbekannt (unter einer Minute)
eta-paused = angehalten, solange die Warteschlange pausiert
reason-capacity-lowered = Der Veranstalter lässt weniger Personen gleichzeitig ein, daher dauert es länger.
reason-capacity-raised = Der Veranstalter lässt mehr Personen gleichzeitig ein, daher geht es schneller.
reason-paused = Die Warteschlange ist pausiert, daher läuft kein Countdown. Sie behalten Ihren Platz.
reason-resumed = Die Warteschlange bewegt sich wieder.
reason-rate-limited = Personen werden in einem festen Tempo pro Minute eingelassen; die Schätzung folgt diesem Tempo.
reason-sessions-longer = Eingelassene bleiben länger als üblich, daher bewegt sich die Warteschlange langsamer.
reason-sessions-shorter = Eingelassene gehen früher als üblich, daher bewegt sich die Warteschlange schneller.
reason-places-restored = Der Warteraum hat sich von einer Störung erholt; Sie haben Ihren Platz behalten.
reason-stock-may-run-out = Es sind weniger Artikel übrig als Personen vor Ihnen: Es kann vor Ihrem Zug ausverkauft sein. Sie behalten Ihren Platz, falls mehr hinzukommen.
reason-priority-lanes = Diese Warteschlange hat Vorrangspuren: Wer darin ist, wird parallel eingelassen, daher kann Ihr Platz etwas zurückrutschen, wenn diese Personen ankommen.
reason-origin-busy = Die Website ist überlastet, daher werden weniger Personen gleichzeitig eingelassen, bis sie sich erholt; die Wartezeit ist länger.
progress-label = Fortschritt in der Warteschlange
keep-open =
    { $n ->
        [one] Lassen Sie diesen Tab geöffnet. Wenn Sie gehen, halten wir Ihren Platz { $n } Sekunde lang.
       *[other] Lassen Sie diesen Tab geöffnet. Wenn Sie gehen, halten wir Ihren Platz { $n } Sekunden lang.
    }
keep-open-hidden =
    { $m ->
        [one] Wenn Sie nur den Tab wechseln oder Ihr Handy sperren, halten wir ihn { $m } Minute lang.
       *[other] Wenn Sie nur den Tab wechseln oder Ihr Handy sperren, halten wir ihn { $m } Minuten lang.
    }
live = Live
updated-at = aktualisiert { $t }
support-code = Support-Code
connecting = Verbinde…
reconnecting = Verbindung wird wiederhergestellt… Ihr Platz wird so lange gehalten, wie der Hinweis unten sagt.
polling = Live-Aktualisierungen sind hier blockiert; stattdessen wird alle paar Sekunden nachgesehen.
noscript = Diese Seite lädt sich alle 20 Sekunden von selbst neu.
notify-button = Benachrichtigen, wenn ich dran bin
notify-on = Wir senden eine Benachrichtigung, wenn Sie dran sind.
notify-denied = Benachrichtigungen sind in diesem Browser blockiert; lassen Sie den Tab geöffnet.
notify-title = Sie sind dran!
notify-body = Ihr Platz bei { $room } ist bereit.
tab-title-admitted = ✅ Sie sind dran — { $room }
footer = Fair: Wer zuerst kommt, kommt zuerst dran. Bereitgestellt von Anteroom.
err-unknown-room = Diesen Warteraum gibt es nicht
err-unknown-room-lead = Prüfen Sie den Link, dem Sie gefolgt sind; diesen Warteraum gibt es nicht.
err-rate-limited = Zu viele Anfragen
err-rate-limited-lead =
    { $n ->
        [one] Diese Seite wurde zu oft neu geladen. Sie behalten Ihren Platz; sie versucht es in { $n } Sekunde von selbst erneut.
       *[other] Diese Seite wurde zu oft neu geladen. Sie behalten Ihren Platz; sie versucht es in { $n } Sekunden von selbst erneut.
    }
retrying-in = Neuer Versuch in { $n } s…
err-not-found = Hier ist nichts
err-not-found-lead = Diese Adresse ist kein Warteraum. Wenn eine Website Sie hierher geschickt hat, prüfen Sie den Link, den sie Ihnen gegeben hat.
err-unavailable = Gleich wieder da
err-unavailable-lead = Der Warteraum hat gerade Probleme. Bitte laden Sie in ein paar Sekunden neu; Sie behalten Ihren Platz.
err-restoring = Die Warteschlange wird wiederhergestellt
err-restoring-lead = Der Speicher des Warteraums wurde neu gestartet, und die Plätze, die schon vergeben waren, werden zuerst zurückgegeben. Neue Plätze öffnen gleich wieder; diese Seite versucht es von selbst erneut.
err-not-embeddable = Hier nicht verfügbar
gw-need-pass = Diese Seite liegt hinter einem Warteraum
gw-need-pass-lead = Stellen Sie sich an, um fortzufahren; Sie werden eingelassen, wenn Sie dran sind.
gw-join-queue = Anstellen
gw-refused = Die Website antwortet nicht
gw-refused-lead = Die Website hinter dieser Adresse hat die Verbindung abgelehnt. Bitte versuchen Sie es gleich noch einmal.
gw-timeout = Die Website hat zu lange gebraucht
gw-timeout-lead = Die Website hinter dieser Adresse hat nicht rechtzeitig geantwortet. Bitte versuchen Sie es gleich noch einmal.
gw-bad-request = Diese Adresse kann nicht gelesen werden
gw-bad-request-lead = Die Adresse hat eine Form, die Websites unterschiedlich lesen (ein kodiertes „/“, ein „\“, ein „.“- oder „..“-Teil). Bitte nutzen Sie die Links der Website selbst.
err-not-embeddable-lead = Dieser Warteraum darf auf dieser Website nicht eingebettet werden.
pow-title = Ihr Browser wird geprüft
pow-lead = Das dauert ein paar Sekunden und hält Bots davon ab, Plätze zu belegen. Sie reihen sich ein, sobald es fertig ist (JavaScript ist nötig).
pow-progress = Ihr Browser wird geprüft… { $n } %
pow-failed = Ihr Browser konnte die Prüfung nicht abschließen. Laden Sie die Seite neu, um es noch einmal zu versuchen.
err-places = Ihr Netzwerk hat seine Plätze in dieser Warteschlange schon
err-places-lead = Jemand im selben Netzwerk (ein Büro, eine Schule, ein Mobilfunknetz) hat bereits so viele Plätze, wie diese Warteschlange pro Netzwerk erlaubt. Versuchen Sie es erneut, sobald eine dieser Personen eingelassen wurde.
err-entry = Diese Warteschlange braucht eine Einladung der Website
err-entry-lead = Öffnen Sie den Warteraum über den Link der Website selbst (melden Sie sich dort zuerst an). Der Link, dem Sie gefolgt sind, enthält keine Einladung, oder sie ist abgelaufen oder gilt für eine andere Warteschlange.
try-again = Erneut versuchen

drop-lead-scheduled = Die Warteschlange öffnet um { $time }. Lassen Sie diese Seite geöffnet: Sie reiht sich von selbst für Sie ein; Neuladen ist nicht nötig.
drop-lead-prequeue = Um { $time } bekommt jeder hier einen zufälligen Platz; früher beitreten hilft nicht. Lassen Sie diese Seite geöffnet: Sie wechselt von selbst in die Warteschlange.
drop-lead-queued-drop = Danke fürs Warten. Die Plätze wurden unter allen in der Vorwarteschlange ausgelost, und wer später kam, steht in Ankunftsreihenfolge dahinter. Diese Seite aktualisiert sich von selbst.
drop-footer-drop = Fair: eine Auslosung, die jeder prüfen kann, danach wer zuerst kommt. Bereitgestellt von Anteroom.
drop-countdown-label = Öffnet in
drop-countdown-now = Öffnet jetzt…
drop-unit-hours = Std.
drop-unit-minutes = Min.
drop-unit-seconds = Sek.
drop-fair-summary = Wie wurde mein Platz bestimmt?
drop-fair-explain = Als die Vorwarteschlange öffnete, hat dieser Verkauf eine Festlegung veröffentlicht: den SHA-256 eines geheimen Zufallswerts. Bei der Öffnung wurde der Wert offengelegt, und alle in der Vorwarteschlange wurden nach HMAC-SHA256(Wert, ihre Besucher-ID) geordnet. Diese Seite prüft Ihren eigenen Platz hier in Ihrem Browser.
drop-fair-checking = Wird geprüft…
drop-fair-result = Ihre Auslosung: { $draw }…; Rang { $rank } von { $n }; Festlegung stimmt: { $ok }
drop-fair-yes = ja
drop-fair-no = nein
drop-fair-not-in = Ihre Auslosung { $draw }… ist nicht unter denen der Vorwarteschlange: Sie sind nach der Öffnung beigetreten, Ihr Platz richtet sich also nach der Ankunft.
drop-fair-mismatch = Der offengelegte Wert passt nicht zur vor der Öffnung veröffentlichten Festlegung.
drop-fair-unavailable = Dieser Browser kann die Prüfung nicht ausführen (er braucht Web Crypto auf einer sicheren Seite). Der Nachweis liegt unter { $url }.
drop-fair-failed = Die Prüfung konnte nicht abgeschlossen werden: Der Fairness-Nachweis war nicht lesbar. Neuer Versuch in ein paar Sekunden.

told-title-queued-random = Sie sind in der Auslosung
told-lead-queued-random = Jedes Mal, wenn ein Platz frei wird, wird unter allen Wartenden eine Person zufällig gezogen. Früher kommen oder neu laden ändert nichts. Diese Seite aktualisiert sich von selbst.
told-footer-random = Fair: eine Zufallsauslosung unter allen Wartenden. Bereitgestellt von Anteroom.
told-chances-label = Ihre Chancen
told-chances =
    { $n ->
        [one] Die { $n } wartende Person wird in etwa { $median } eingelassen; 1 von 20 innerhalb von { $low }, 19 von 20 innerhalb von { $high }.
       *[other] Etwa die Hälfte der { $n } jetzt Wartenden wird innerhalb von { $median } eingelassen; 1 von 20 innerhalb von { $low }, 19 von 20 innerhalb von { $high }.
    }
told-chances-unknown = Noch unbekannt: Alle jetzt Wartenden werden innerhalb von höchstens { $t } eingelassen.
told-chances-paused = Angehalten, solange die Auslosung pausiert.
told-note-random-draw = In dieser Warteschlange gibt es keine Plätze: Alle Wartenden haben bei jeder Ziehung dieselbe Chance, egal wann sie kamen. Die Chancen sind für alle gleich und ändern sich, wenn Personen hinzukommen oder gehen.
told-note-any-time-before = Jederzeit vor { $open } anzukommen ist gleich gut: Die Vorwarteschlange öffnet um { $time }, und um { $open } werden alle darin in eine zufällige Reihenfolge gebracht. Sie müssen nicht in der Sekunde der Öffnung hier sein.
told-fair-rank-explain = Der Rang ist Ihre Auslosung unter allen in der Vorwarteschlange bei der Öffnung; Ihr Platz zählt nur die Personen, die noch vor Ihnen warten, und ist daher kleiner, sobald einige von ihnen eingelassen wurden.
told-not-live = Nicht live: keine Aktualisierung seit { $t }. Neuer Versuch…
told-dismiss = Verstanden
told-err-unavailable-newcomer = Der Warteraum hat gerade Probleme, daher konnten Sie sich noch nicht anstellen. Diese Seite versucht es von selbst erneut.
told-err-unavailable-kept = Der Warteraum hat gerade Probleme. Wenn Sie schon einen Platz hatten, behalten Sie ihn. Diese Seite versucht es von selbst erneut.
told-err-places-retry = Jemand im selben Netzwerk (ein Büro, eine Schule, ein Mobilfunknetz) hat bereits so viele Plätze, wie diese Warteschlange pro Netzwerk erlaubt. Ein Platz wird frei, wenn eine dieser Personen eingelassen wird; diese Seite versucht es von selbst erneut.
told-pow-noscript = Dieser Warteraum prüft Ihren Browser mit einer kurzen Berechnung, bevor Sie sich anstellen, und dafür ist JavaScript nötig. Aktivieren Sie JavaScript für diese Website und laden Sie die Seite dann neu.
told-embed-refused-title = Dieser Warteraum kann hier nicht angezeigt werden
told-embed-refused = Der Warteraum „{ $room }“ erlaubt keine Einbettung auf { $origin }. Wenn dies Ihre Website ist, fügen Sie { $origin } zu den embed_origins des Raums hinzu.
