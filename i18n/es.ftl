# Anteroom's visitor-facing strings: Spanish (es). See en.ftl.

language-name = Español
language-direction = ltr

language-label = Idioma
waiting-room = Sala de espera
title-queued = Estás en la fila
lead-queued = Gracias por esperar. Dejamos pasar a la gente estrictamente en el orden de llegada, y esta página se actualiza sola.
lead-queued-lanes = Gracias por esperar. Dejamos pasar a la gente en el orden de llegada, con una parte fija de plazas para las filas prioritarias, y esta página se actualiza sola.
footer-lanes = Justo: por orden de llegada dentro de cada fila. Con la tecnología de Anteroom.
title-paused = La fila está en pausa
lead-paused = Las entradas están en pausa por un momento. Conservas tu lugar; los números vuelven a moverse en cuanto se reanuden.
title-sold-out = Agotado
lead-sold-out = Por ahora se ha agotado todo lo disponible. Si hay más, esta página se une a la fila por ti; mantenla abierta.
lead-sold-out-kept = Por ahora se ha agotado todo lo disponible. Conservas tu lugar por si hay más, y esta página avanza sola.
title-closed = Esta sala de espera está cerrada
lead-closed = El organizador ha cerrado esta sala de espera por ahora. Mantén esta página abierta: se une a la fila por ti en cuanto la sala abra.
lead-closed-kept = El organizador ha cerrado esta sala de espera por ahora. Conservas tu lugar en la fila, y esta página avanza sola cuando vuelva a abrir.
title-rejected = Esta venta no está dejando pasar a nadie
lead-rejected = El organizador no deja entrar a nadie ni unirse a la fila en este momento. Mantén esta página abierta: se une a la fila por ti en cuanto la venta vuelva a admitir.
lead-rejected-kept = El organizador no deja entrar a nadie en este momento. Conservas tu lugar en la fila, y esta página avanza sola cuando la venta vuelva a admitir.
title-scheduled = La fila aún no se ha abierto
lead-scheduled = Esta venta tiene una hora de inicio fijada. Mantén esta página abierta: se une a la fila por ti en cuanto se abra.
title-prequeue = Estás en la prefila
lead-prequeue = Cuando empiece la venta, todos los de la prefila se ordenan al azar, así que no hace falta recargar ni haber llegado primero. Mantén esta página abierta: pasa a la fila sola en la apertura.
title-event-ended = Esta venta ha terminado
lead-event-ended = La venta para la que era esta sala de espera ha terminado y la fila está cerrada. Gracias por esperar.
title-not-queued = Ya no estás en la fila
lead-not-queued = El organizador vació la fila (o eliminó tu lugar), así que ya no estás esperando. Puedes volver a unirte al final de la fila.
title-no-show = Perdiste tu turno
lead-no-show = Te dejamos pasar, pero no llegaste al sitio en el tiempo permitido, así que tu lugar pasó a la siguiente persona de la fila. Puedes volver a unirte al final de la fila.
title-admitted = Es tu turno
lead-admitted = Te llevamos ahora…
continue-link = Continuar
rejoin = Unirse a la fila
position-label = Tu lugar en la fila
ahead-many =
    { $n ->
        [one] { $n } persona delante de ti
       *[other] { $n } personas delante de ti
    }
ahead-none = ¡Eres el siguiente!
ahead-none-paused = No hay nadie delante de ti
in-line = { $n } en la fila
in-line-label = Personas en la fila
announce-place = Ahora eres el número { $n } de la fila.
eta-label = Espera estimada
eta-range = { $low } – { $high }
eta-minutes-range = { $low }–{ $high } min
eta-up-to = hasta { $t }
eta-under-minute = menos de un minuto
eta-minutes = { $n } min
eta-hours = { $n } h
eta-unknown = calculando…
eta-went-up = La estimación ha subido: quienes están delante tardan más de lo habitual.
eta-went-down = Buenas noticias: la fila avanza más rápido de lo previsto.
eta-explain = Según cuánto tiempo se queda la gente una vez dentro y cuántas plazas se liberan.
you-were-away =
    { $n ->
        [one] Estuviste fuera más de { $n } segundo, así que perdiste tu lugar y volviste a la fila por el final.
       *[other] Estuviste fuera más de { $n } segundos, así que perdiste tu lugar y volviste a la fila por el final.
    }
eta-at-most = aún no se sabe (como mucho { $t })
eta-at-most-minute = aún no se sabe (menos de un minuto)
eta-paused = en espera mientras la fila está en pausa
reason-capacity-lowered = El organizador deja pasar a menos personas a la vez, así que la espera es más larga.
reason-capacity-raised = El organizador deja pasar a más personas a la vez, así que la espera es más corta.
reason-paused = La fila está en pausa, así que no hay cuenta atrás. Conservas tu lugar.
reason-resumed = La fila vuelve a avanzar.
reason-rate-limited = Se deja pasar a la gente a un ritmo fijo por minuto; la estimación sigue ese ritmo.
reason-sessions-longer = Quienes ya entraron se quedan más de lo habitual, así que la fila avanza más despacio.
reason-sessions-shorter = Quienes ya entraron se van antes de lo habitual, así que la fila avanza más rápido.
reason-places-restored = La sala de espera se recuperó de un fallo; conservaste tu lugar.
reason-stock-may-run-out = Quedan menos artículos que personas delante de ti: puede agotarse antes de tu turno. Conservas tu lugar por si se añaden más.
reason-priority-lanes = Esta fila tiene filas prioritarias: quienes están en ellas pasan a la vez, así que tu lugar puede retroceder un poco cuando llegan.
reason-origin-busy = El sitio está sobrecargado, así que pasa menos gente a la vez hasta que se recupere; la espera es más larga.
progress-label = Avance en la fila
keep-open =
    { $n ->
        [one] Mantén esta pestaña abierta. Si te vas, guardamos tu lugar durante { $n } segundo.
       *[other] Mantén esta pestaña abierta. Si te vas, guardamos tu lugar durante { $n } segundos.
    }
keep-open-hidden =
    { $m ->
        [one] Si solo cambias de pestaña o bloqueas el móvil, lo guardamos durante { $m } minuto.
       *[other] Si solo cambias de pestaña o bloqueas el móvil, lo guardamos durante { $m } minutos.
    }
live = En directo
updated-at = actualizado { $t }
support-code = Código de soporte
connecting = Conectando…
reconnecting = Reconectando… tu lugar se guarda durante el tiempo que indica la nota de abajo.
polling = Aquí se bloquean las actualizaciones en directo; comprobamos cada pocos segundos.
noscript = Esta página se actualiza sola cada 20 segundos.
notify-button = Avisarme cuando sea mi turno
notify-on = Te enviaremos una notificación cuando sea tu turno.
notify-denied = Las notificaciones están bloqueadas en este navegador; mantén la pestaña abierta.
notify-title = ¡Es tu turno!
notify-body = Tu lugar en { $room } está listo.
tab-title-admitted = ✅ Tu turno — { $room }
footer = Justo: por orden de llegada. Con la tecnología de Anteroom.
err-unknown-room = No existe esa sala de espera
err-unknown-room-lead = Revisa el enlace que seguiste; esta sala de espera no existe.
err-rate-limited = Demasiadas solicitudes
err-rate-limited-lead =
    { $n ->
        [one] Esta página se recargó demasiadas veces. Conservas tu lugar; vuelve a intentarlo sola en { $n } segundo.
       *[other] Esta página se recargó demasiadas veces. Conservas tu lugar; vuelve a intentarlo sola en { $n } segundos.
    }
retrying-in = Reintentando en { $n } s…
err-not-found = Aquí no hay nada
err-not-found-lead = Esta dirección no es una sala de espera. Si un sitio te trajo aquí, revisa el enlace que te dio.
err-unavailable = Volvemos enseguida
err-unavailable-lead = La sala de espera tiene problemas en este momento. Recarga en unos segundos; conservas tu lugar.
err-restoring = Se está restaurando la fila
err-restoring-lead = El almacén de la sala de espera se reinició y primero se están devolviendo los lugares que la gente ya tenía. Los lugares nuevos se abren de nuevo en un momento; esta página vuelve a intentarlo sola.
err-not-embeddable = No disponible aquí
gw-need-pass = Esta página está detrás de una sala de espera
gw-need-pass-lead = Únete a la fila para continuar; entrarás cuando sea tu turno.
gw-join-queue = Unirse a la fila
gw-refused = El sitio no responde
gw-refused-lead = El sitio detrás de esta dirección rechazó la conexión. Inténtalo de nuevo en un momento.
gw-timeout = El sitio tardó demasiado en responder
gw-timeout-lead = El sitio detrás de esta dirección no respondió a tiempo. Inténtalo de nuevo en un momento.
gw-bad-request = No se puede leer esta dirección
gw-bad-request-lead = La dirección tiene una forma que los sitios leen de maneras distintas (una '/' codificada, una '\', una parte '.' o '..'). Usa los enlaces del propio sitio.
err-not-embeddable-lead = Esta sala de espera no puede insertarse en este sitio.
pow-title = Comprobando tu navegador
pow-lead = Tarda unos segundos e impide que los bots se queden con los lugares. Te unes a la fila en cuanto termina (se necesita JavaScript).
pow-progress = Comprobando tu navegador… { $n } %
pow-failed = Tu navegador no pudo terminar la comprobación. Recarga la página para intentarlo de nuevo.
err-places = Tu red ya tiene sus lugares en esta fila
err-places-lead = Alguien en la misma red (una oficina, un centro educativo, una red móvil) ya tiene tantos lugares como permite esta fila por red. Inténtalo de nuevo cuando alguno de ellos haya entrado.
err-entry = Esta fila necesita una invitación del sitio
err-entry-lead = Abre la sala de espera desde el enlace del propio sitio (inicia sesión allí primero). El enlace que seguiste no tiene invitación, o ha caducado o es de otra fila.
try-again = Intentar de nuevo

drop-lead-scheduled = La fila abre a las { $time }. Mantén esta página abierta: se une a la fila por ti; no hace falta recargar.
drop-lead-prequeue = A las { $time } todos los que están aquí reciben un lugar al azar; unirse antes no ayuda. Mantén esta página abierta: pasa a la fila sola.
drop-lead-queued-drop = Gracias por esperar. Los lugares se sortearon al azar entre todos los de la prefila, y quienes llegaron después hacen fila detrás por orden de llegada. Esta página se actualiza sola.
drop-footer-drop = Justo: un sorteo que cualquiera puede comprobar y luego por orden de llegada. Con la tecnología de Anteroom.
drop-countdown-label = Abre en
drop-countdown-now = Abriendo ahora…
drop-unit-hours = h
drop-unit-minutes = min
drop-unit-seconds = s
drop-fair-summary = ¿Cómo se decidió mi lugar?
drop-fair-explain = Cuando se abrió la prefila, esta venta publicó un compromiso: el SHA-256 de una semilla aleatoria secreta. En la apertura reveló la semilla, y todos los de la prefila se ordenaron por HMAC-SHA256(semilla, su id de visitante). Esta página comprueba tu propio lugar aquí, en tu navegador.
drop-fair-checking = Comprobando…
drop-fair-result = Tu sorteo: { $draw }…; puesto { $rank } de { $n }; el compromiso coincide: { $ok }
drop-fair-yes = sí
drop-fair-no = no
drop-fair-not-in = Tu sorteo { $draw }… no está entre los de la prefila: te uniste después de la apertura, así que tu lugar es por orden de llegada.
drop-fair-mismatch = La semilla revelada no coincide con el compromiso publicado antes de la apertura.
drop-fair-unavailable = Este navegador no puede hacer la comprobación (necesita Web Crypto en una página segura). El registro está en { $url }.
drop-fair-failed = No se pudo completar la comprobación: no se pudo leer el registro de equidad. Reintentando en unos segundos.

told-title-queued-random = Estás en el sorteo
told-lead-queued-random = Cada vez que se libera un lugar, se elige a una persona al azar entre todos los que esperan. Llegar antes o recargar no cambia nada. Esta página se actualiza sola.
told-footer-random = Justo: un sorteo al azar entre todos los que esperan. Con la tecnología de Anteroom.
told-chances-label = Tus posibilidades
told-chances =
    { $n ->
        [one] La { $n } persona que espera ahora entra en unos { $median }; 1 de cada 20 en { $low }, 19 de cada 20 en { $high }.
       *[other] Cerca de la mitad de las { $n } personas que esperan ahora entran en { $median }; 1 de cada 20 en { $low }, 19 de cada 20 en { $high }.
    }
told-chances-unknown = Aún no se sabe: todos los que esperan ahora entran en { $t } como mucho.
told-chances-paused = En espera mientras el sorteo está en pausa.
told-note-random-draw = En esta fila no hay lugares: todos los que esperan tienen la misma posibilidad en cada sorteo, lleguen cuando lleguen. Las posibilidades son iguales para todos y cambian a medida que la gente entra y sale.
told-note-any-time-before = Llegar en cualquier momento antes de las { $open } es igual de bueno: la prefila abre a las { $time } y a las { $open } todos los que están en ella se ordenan al azar. No hace falta estar aquí en el segundo exacto de la apertura.
told-fair-rank-explain = El puesto es tu sorteo entre todos los de la prefila en la apertura; tu lugar solo cuenta a quienes siguen esperando delante de ti, así que baja cuando algunos de ellos han entrado.
told-not-live = Sin conexión en directo: ninguna actualización desde { $t }. Reintentando…
told-dismiss = Entendido
told-err-unavailable-newcomer = La sala de espera tiene problemas en este momento, así que aún no pudiste unirte a la fila. Esta página vuelve a intentarlo sola.
told-err-unavailable-kept = La sala de espera tiene problemas en este momento. Si ya tenías un lugar en la fila, lo conservas. Esta página vuelve a intentarlo sola.
told-err-places-retry = Alguien en la misma red (una oficina, un centro educativo, una red móvil) ya tiene tantos lugares como permite esta fila por red. Se libera un lugar cuando uno de ellos entra; esta página vuelve a intentarlo sola.
told-pow-noscript = Esta sala de espera comprueba tu navegador con un cálculo breve antes de que te unas a la fila, y eso necesita JavaScript. Activa JavaScript para este sitio y recarga esta página.
told-embed-refused-title = Esta sala de espera no se puede mostrar aquí
told-embed-refused = La sala de espera «{ $room }» no permite insertarse en { $origin }. Si este es tu sitio, añade { $origin } a los embed_origins de la sala.
