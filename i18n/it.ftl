# Anteroom's visitor-facing strings: Italian (it). See en.ftl.

language-name = Italiano
language-direction = ltr

language-label = Lingua
waiting-room = Sala d'attesa
title-queued = Sei in coda
lead-queued = Grazie per l'attesa. Facciamo entrare le persone rigorosamente nell'ordine di arrivo, e questa pagina si aggiorna da sola.
lead-queued-lanes = Grazie per l'attesa. Facciamo entrare le persone nell'ordine di arrivo, con una quota fissa di posti per le corsie prioritarie, e questa pagina si aggiorna da sola.
footer-lanes = Equo: chi prima arriva, prima entra, all'interno di ogni corsia. Realizzato con Anteroom.
title-paused = La coda è in pausa
lead-paused = Gli ingressi sono sospesi per un momento. Mantieni il tuo posto; i numeri ripartono appena riprendono.
title-sold-out = Esaurito
lead-sold-out = Per ora è stato preso tutto quello che era disponibile. Se se ne aggiunge altro, questa pagina si mette in coda per te da sola; tienila aperta.
lead-sold-out-kept = Per ora è stato preso tutto quello che era disponibile. Mantieni il tuo posto nel caso se ne aggiunga altro, e questa pagina va avanti da sola.
title-closed = Questa sala d'attesa è chiusa
lead-closed = L'organizzatore ha chiuso per ora questa sala d'attesa. Tieni aperta questa pagina: si mette in coda per te da sola appena la sala apre.
lead-closed-kept = L'organizzatore ha chiuso per ora questa sala d'attesa. Mantieni il tuo posto in coda, e questa pagina va avanti da sola quando riapre.
title-rejected = Questa vendita non fa entrare nessuno
lead-rejected = L'organizzatore non fa entrare nessuno né mettersi in coda in questo momento. Tieni aperta questa pagina: si mette in coda per te da sola appena la vendita riprende a far entrare.
lead-rejected-kept = L'organizzatore non fa entrare nessuno in questo momento. Mantieni il tuo posto in coda, e questa pagina va avanti da sola quando la vendita riprende a far entrare.
title-scheduled = La coda non è ancora aperta
lead-scheduled = Questa vendita ha un orario di inizio fissato. Tieni aperta questa pagina: si mette in coda per te da sola appena la coda apre.
title-prequeue = Sei nella pre-coda
lead-prequeue = All'apertura della vendita, tutti quelli in pre-coda vengono messi in ordine casuale, quindi non serve ricaricare né arrivare per primi. Tieni aperta questa pagina: passa in coda da sola all'apertura.
title-event-ended = Questa vendita è terminata
lead-event-ended = La vendita per cui era questa sala d'attesa è finita e la coda è chiusa. Grazie per l'attesa.
title-not-queued = Non sei più in coda
lead-not-queued = L'organizzatore ha svuotato la coda (o rimosso il tuo posto), quindi non sei più in attesa. Puoi rimetterti in fondo alla coda.
title-no-show = Hai perso il tuo turno
lead-no-show = Sei stato fatto entrare, ma non hai raggiunto il sito nel tempo consentito, quindi il tuo posto è passato alla persona successiva. Puoi rimetterti in fondo alla coda.
title-admitted = È il tuo turno
lead-admitted = Ti stiamo portando lì…
continue-link = Continua
rejoin = Mettiti in coda
position-label = Il tuo posto in coda
ahead-many =
    { $n ->
        [one] { $n } persona davanti a te
       *[other] { $n } persone davanti a te
    }
ahead-none = Sei il prossimo!
ahead-none-paused = Nessuno è davanti a te
in-line = { $n } in coda
in-line-label = Persone in coda
announce-place = Ora sei il numero { $n } in coda.
eta-label = Attesa stimata
eta-range = { $low } – { $high }
eta-minutes-range = { $low }–{ $high } min
eta-up-to = fino a { $t }
eta-under-minute = meno di un minuto
eta-minutes = { $n } min
eta-hours = { $n } h
eta-unknown = calcolo in corso…
eta-went-up = La stima è salita: chi è davanti a te ci mette più del solito.
eta-went-down = Buone notizie: la coda scorre più veloce del previsto.
eta-explain = In base a quanto restano le persone una volta entrate e a quanti posti si liberano.
you-were-away =
    { $n ->
        [one] Sei stato via più di { $n } secondo, quindi hai perso il posto e sei tornato in fondo alla coda.
       *[other] Sei stato via più di { $n } secondi, quindi hai perso il posto e sei tornato in fondo alla coda.
    }
eta-at-most = non ancora nota (al massimo { $t })
eta-at-most-minute = non ancora nota (meno di un minuto)
eta-paused = sospesa finché la coda è in pausa
reason-capacity-lowered = L'organizzatore fa entrare meno persone alla volta, quindi l'attesa è più lunga.
reason-capacity-raised = L'organizzatore fa entrare più persone alla volta, quindi l'attesa è più breve.
reason-paused = La coda è in pausa, quindi non c'è conto alla rovescia. Mantieni il tuo posto.
reason-resumed = La coda si muove di nuovo.
reason-rate-limited = Le persone entrano a un ritmo fisso al minuto; la stima segue quel ritmo.
reason-sessions-longer = Chi è entrato resta più a lungo del solito, quindi la coda scorre più lentamente.
reason-sessions-shorter = Chi è entrato esce prima del solito, quindi la coda scorre più veloce.
reason-places-restored = La sala d'attesa si è ripresa da un guasto; hai mantenuto il tuo posto.
reason-stock-may-run-out = Restano meno articoli delle persone davanti a te: potrebbero esaurirsi prima del tuo turno. Mantieni il posto nel caso se ne aggiungano altri.
reason-priority-lanes = Questa coda ha corsie prioritarie: chi è in quelle entra in parallelo, quindi il tuo posto può arretrare un po' quando arrivano.
reason-origin-busy = Il sito è sotto sforzo, quindi entrano meno persone alla volta finché non si riprende; l'attesa è più lunga.
progress-label = Avanzamento in coda
keep-open =
    { $n ->
        [one] Tieni aperta questa scheda. Se esci, teniamo il tuo posto per { $n } secondo.
       *[other] Tieni aperta questa scheda. Se esci, teniamo il tuo posto per { $n } secondi.
    }
keep-open-hidden =
    { $m ->
        [one] Se cambi solo scheda o blocchi il telefono, lo teniamo per { $m } minuto.
       *[other] Se cambi solo scheda o blocchi il telefono, lo teniamo per { $m } minuti.
    }
live = In diretta
updated-at = aggiornato { $t }
support-code = Codice di assistenza
connecting = Connessione…
reconnecting = Riconnessione… il tuo posto è tenuto per il tempo indicato nella nota qui sotto.
polling = Qui gli aggiornamenti in diretta sono bloccati; controlliamo invece ogni pochi secondi.
noscript = Questa pagina si aggiorna da sola ogni 20 secondi.
notify-button = Avvisami quando è il mio turno
notify-on = Ti invieremo una notifica quando sarà il tuo turno.
notify-denied = Le notifiche sono bloccate in questo browser; tieni aperta la scheda.
notify-title = È il tuo turno!
notify-body = Il tuo posto per { $room } è pronto.
tab-title-admitted = ✅ Il tuo turno — { $room }
footer = Equo: chi prima arriva, prima entra. Realizzato con Anteroom.
err-unknown-room = Questa sala d'attesa non esiste
err-unknown-room-lead = Controlla il link che hai seguito; questa sala d'attesa non esiste.
err-rate-limited = Troppe richieste
err-rate-limited-lead =
    { $n ->
        [one] Questa pagina è stata ricaricata troppo spesso. Mantieni il tuo posto; riprova da sola tra { $n } secondo.
       *[other] Questa pagina è stata ricaricata troppo spesso. Mantieni il tuo posto; riprova da sola tra { $n } secondi.
    }
retrying-in = Nuovo tentativo tra { $n } s…
err-not-found = Qui non c'è niente
err-not-found-lead = Questo indirizzo non è una sala d'attesa. Se un sito ti ha mandato qui, controlla il link che ti ha dato.
err-unavailable = Torniamo subito
err-unavailable-lead = La sala d'attesa ha un problema in questo momento. Ricarica tra qualche secondo; mantieni il tuo posto.
err-restoring = La coda è in fase di ripristino
err-restoring-lead = L'archivio della sala d'attesa è stato riavviato e i posti che le persone avevano già vengono ripristinati per primi. I nuovi posti riaprono tra un momento; questa pagina riprova da sola.
err-not-embeddable = Non disponibile qui
gw-need-pass = Questa pagina è dietro una sala d'attesa
gw-need-pass-lead = Mettiti in coda per continuare; entrerai quando sarà il tuo turno.
gw-join-queue = Mettiti in coda
gw-refused = Il sito non risponde
gw-refused-lead = Il sito dietro questo indirizzo ha rifiutato la connessione. Riprova tra un momento.
gw-timeout = Il sito ha impiegato troppo a rispondere
gw-timeout-lead = Il sito dietro questo indirizzo non ha risposto in tempo. Riprova tra un momento.
gw-bad-request = Questo indirizzo non può essere letto
gw-bad-request-lead = L'indirizzo ha una forma che i siti leggono in modi diversi (una '/' codificata, una '\', una parte '.' o '..'). Usa i link del sito stesso.
err-not-embeddable-lead = Questa sala d'attesa non può essere incorporata in questo sito.
pow-title = Controllo del browser
pow-lead = Richiede qualche secondo e impedisce ai bot di prendere i posti. Entri in coda appena finito (serve JavaScript).
pow-progress = Controllo del browser… { $n } %
pow-failed = Il tuo browser non è riuscito a completare il controllo. Ricarica la pagina per riprovare.
err-places = La tua rete ha già i suoi posti in questa coda
err-places-lead = Qualcuno sulla stessa rete (un ufficio, una scuola, una rete mobile) ha già tanti posti quanti questa coda ne consente per rete. Riprova quando uno di loro sarà entrato.
err-entry = Questa coda richiede un invito dal sito
err-entry-lead = Apri la sala d'attesa dal link del sito stesso (accedi lì prima). Il link che hai seguito non ha un invito, oppure è scaduto o è per un'altra coda.
try-again = Riprova

drop-lead-scheduled = La coda apre alle { $time }. Tieni aperta questa pagina: si mette in coda per te da sola; non serve ricaricare.
drop-lead-prequeue = Alle { $time } tutti quelli qui ricevono un posto a caso; entrare prima non aiuta. Tieni aperta questa pagina: passa in coda da sola.
drop-lead-queued-drop = Grazie per l'attesa. I posti sono stati sorteggiati tra tutti quelli in pre-coda, e chi è arrivato dopo si mette dietro in ordine di arrivo. Questa pagina si aggiorna da sola.
drop-footer-drop = Equo: un sorteggio che chiunque può verificare, poi chi prima arriva, prima entra. Realizzato con Anteroom.
drop-countdown-label = Apre tra
drop-countdown-now = Apertura in corso…
drop-unit-hours = h
drop-unit-minutes = min
drop-unit-seconds = s
drop-fair-summary = Come è stato deciso il mio posto?
drop-fair-explain = All'apertura della pre-coda, questa vendita ha pubblicato un impegno: lo SHA-256 di un seme casuale segreto. All'apertura ha rivelato il seme, e tutti quelli in pre-coda sono stati ordinati per HMAC-SHA256(seme, il loro id visitatore). Questa pagina verifica il tuo posto qui, nel tuo browser.
drop-fair-checking = Verifica in corso…
drop-fair-result = Il tuo sorteggio: { $draw }…; posizione { $rank } su { $n }; l'impegno corrisponde: { $ok }
drop-fair-yes = sì
drop-fair-no = no
drop-fair-not-in = Il tuo sorteggio { $draw }… non è tra quelli della pre-coda: sei entrato dopo l'apertura, quindi il tuo posto è in ordine di arrivo.
drop-fair-mismatch = Il seme rivelato non corrisponde all'impegno pubblicato prima dell'apertura.
drop-fair-unavailable = Questo browser non può eseguire la verifica (serve Web Crypto su una pagina sicura). La registrazione è su { $url }.
drop-fair-failed = Non è stato possibile completare la verifica: la registrazione di equità non è leggibile. Nuovo tentativo tra qualche secondo.

told-title-queued-random = Sei nel sorteggio
told-lead-queued-random = Ogni volta che si libera un posto, viene estratta a caso una persona tra tutte quelle in attesa. Arrivare prima o ricaricare non cambia nulla. Questa pagina si aggiorna da sola.
told-footer-random = Equo: un sorteggio casuale tra tutti quelli in attesa. Realizzato con Anteroom.
told-chances-label = Le tue probabilità
told-chances =
    { $n ->
        [one] La { $n } persona in attesa entra entro circa { $median }; 1 su 20 entro { $low }, 19 su 20 entro { $high }.
       *[other] Circa metà delle { $n } persone in attesa entra entro { $median }; 1 su 20 entro { $low }, 19 su 20 entro { $high }.
    }
told-chances-unknown = Non ancora noto: tutti quelli in attesa entrano entro al massimo { $t }.
told-chances-paused = Sospeso finché il sorteggio è in pausa.
told-note-random-draw = In questa coda non ci sono posti: chiunque sia in attesa ha la stessa probabilità a ogni estrazione, a prescindere da quando è arrivato. Le probabilità sono uguali per tutti e cambiano man mano che le persone arrivano e se ne vanno.
told-note-any-time-before = Arrivare in qualsiasi momento prima delle { $open } va bene uguale: la pre-coda apre alle { $time } e alle { $open } tutti quelli dentro vengono messi in ordine casuale. Non serve essere qui nel secondo esatto dell'apertura.
told-fair-rank-explain = La posizione è il tuo sorteggio tra tutti quelli in pre-coda all'apertura; il tuo posto conta solo chi è ancora in attesa davanti a te, quindi è più basso quando alcuni di loro sono entrati.
told-not-live = Non in diretta: nessun aggiornamento dalle { $t }. Nuovo tentativo…
told-dismiss = Ho capito
told-err-unavailable-newcomer = La sala d'attesa ha un problema in questo momento, quindi non sei ancora riuscito a entrare in coda. Questa pagina riprova da sola.
told-err-unavailable-kept = La sala d'attesa ha un problema in questo momento. Se avevi già un posto in coda, lo mantieni. Questa pagina riprova da sola.
told-err-places-retry = Qualcuno sulla stessa rete (un ufficio, una scuola, una rete mobile) ha già tanti posti quanti questa coda ne consente per rete. Un posto si libera quando uno di loro entra; questa pagina riprova da sola.
told-pow-noscript = Questa sala d'attesa controlla il tuo browser con un breve calcolo prima che tu entri in coda, e serve JavaScript. Attiva JavaScript per questo sito, poi ricarica questa pagina.
told-embed-refused-title = Questa sala d'attesa non può essere mostrata qui
told-embed-refused = La sala d'attesa «{ $room }» non consente di essere incorporata su { $origin }. Se è il tuo sito, aggiungi { $origin } agli embed_origins della sala.
