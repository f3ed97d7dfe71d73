# Anteroom's visitor-facing strings: Brazilian Portuguese (pt-BR). See en.ftl.

language-name = Português (Brasil)
language-direction = ltr

language-label = Idioma
waiting-room = Sala de espera
title-queued = Você está na fila
lead-queued = Obrigado por esperar. Deixamos as pessoas entrarem estritamente na ordem de chegada, e esta página se atualiza sozinha.
lead-queued-lanes = Obrigado por esperar. Deixamos as pessoas entrarem na ordem de chegada, com uma parte fixa das vagas para as filas prioritárias, e esta página se atualiza sozinha.
footer-lanes = Justo: por ordem de chegada dentro de cada fila. Com tecnologia Anteroom.
title-paused = A fila está pausada
lead-paused = As entradas estão pausadas por um momento. Você mantém seu lugar; os números voltam a andar assim que forem retomadas.
title-sold-out = Esgotado
lead-sold-out = Tudo o que estava disponível já foi pego por enquanto. Se houver mais, esta página entra na fila por você sozinha; mantenha-a aberta.
lead-sold-out-kept = Tudo o que estava disponível já foi pego por enquanto. Você mantém seu lugar caso haja mais, e esta página avança sozinha.
title-closed = Esta sala de espera está fechada
lead-closed = O organizador fechou esta sala de espera por enquanto. Mantenha esta página aberta: ela entra na fila por você assim que a sala abrir.
lead-closed-kept = O organizador fechou esta sala de espera por enquanto. Você mantém seu lugar na fila, e esta página avança sozinha quando ela reabrir.
title-rejected = Esta venda não está deixando ninguém entrar
lead-rejected = O organizador não está deixando ninguém entrar nem entrar na fila agora. Mantenha esta página aberta: ela entra na fila por você assim que a venda voltar a admitir.
lead-rejected-kept = O organizador não está deixando ninguém entrar agora. Você mantém seu lugar na fila, e esta página avança sozinha quando a venda voltar a admitir.
title-scheduled = A fila ainda não abriu
lead-scheduled = Esta venda tem um horário de início definido. Mantenha esta página aberta: ela entra na fila por você assim que a fila abrir.
title-prequeue = Você está na pré-fila
lead-prequeue = Quando a venda abrir, todos na pré-fila serão colocados em ordem aleatória, então não é preciso recarregar nem chegar primeiro. Mantenha esta página aberta: ela passa para a fila sozinha na abertura.
title-event-ended = Esta venda terminou
lead-event-ended = A venda para a qual esta sala de espera existia acabou, e a fila está fechada. Obrigado por esperar.
title-not-queued = Você não está mais na fila
lead-not-queued = O organizador esvaziou a fila (ou removeu seu lugar), então você não está mais esperando. Você pode entrar de novo no fim da fila.
title-no-show = Você perdeu sua vez
lead-no-show = Você foi liberado, mas não chegou ao site no tempo permitido, então seu lugar passou para a próxima pessoa da fila. Você pode entrar de novo no fim da fila.
title-admitted = É a sua vez
lead-admitted = Levando você até lá…
continue-link = Continuar
rejoin = Entrar na fila
position-label = Seu lugar na fila
ahead-many =
    { $n ->
        [one] { $n } pessoa na sua frente
       *[other] { $n } pessoas na sua frente
    }
ahead-none = Você é o próximo!
ahead-none-paused = Ninguém está na sua frente
in-line = { $n } na fila
in-line-label = Pessoas na fila
announce-place = Agora você é o número { $n } na fila.
eta-label = Espera estimada
eta-range = { $low } – { $high }
eta-minutes-range = { $low }–{ $high } min
eta-up-to = até { $t }
eta-under-minute = menos de um minuto
eta-minutes = { $n } min
eta-hours = { $n } h
eta-unknown = calculando…
eta-went-up = A estimativa subiu: quem está na sua frente está demorando mais que o normal.
eta-went-down = Boa notícia: a fila está andando mais rápido que o esperado.
eta-explain = Com base em quanto tempo as pessoas ficam depois de entrar e em quantas vagas se liberam.
you-were-away =
    { $n ->
        [one] Você ficou fora por mais de { $n } segundo, então perdeu seu lugar e voltou para o fim da fila.
       *[other] Você ficou fora por mais de { $n } segundos, então perdeu seu lugar e voltou para o fim da fila.
    }
eta-at-most = ainda desconhecida (no máximo { $t })
eta-at-most-minute = ainda desconhecida (menos de um minuto)
eta-paused = suspensa enquanto a fila está pausada
reason-capacity-lowered = O organizador está deixando menos pessoas entrarem por vez, então a espera é maior.
reason-capacity-raised = O organizador está deixando mais pessoas entrarem por vez, então a espera é menor.
reason-paused = A fila está pausada, então não há contagem regressiva. Você mantém seu lugar.
reason-resumed = A fila voltou a andar.
reason-rate-limited = As pessoas entram num ritmo fixo por minuto; a estimativa segue esse ritmo.
reason-sessions-longer = Quem entrou está ficando mais que o normal, então a fila anda mais devagar.
reason-sessions-shorter = Quem entrou está saindo mais cedo que o normal, então a fila anda mais rápido.
reason-places-restored = A sala de espera se recuperou de uma falha; você manteve seu lugar.
reason-stock-may-run-out = Restam menos itens do que pessoas na sua frente: pode esgotar antes da sua vez. Você mantém seu lugar caso mais sejam adicionados.
reason-priority-lanes = Esta fila tem filas prioritárias: quem está nelas entra junto, então seu lugar pode recuar um pouco quando chegam.
reason-origin-busy = O site está sobrecarregado, então menos pessoas entram por vez até ele se recuperar; a espera é maior.
progress-label = Progresso na fila
keep-open =
    { $n ->
        [one] Mantenha esta aba aberta. Se você sair, guardamos seu lugar por { $n } segundo.
       *[other] Mantenha esta aba aberta. Se você sair, guardamos seu lugar por { $n } segundos.
    }
keep-open-hidden =
    { $m ->
        [one] Se você só trocar de aba ou bloquear o celular, guardamos por { $m } minuto.
       *[other] Se você só trocar de aba ou bloquear o celular, guardamos por { $m } minutos.
    }
live = Ao vivo
updated-at = atualizado { $t }
support-code = Código de suporte
connecting = Conectando…
reconnecting = Reconectando… seu lugar fica guardado pelo tempo que a nota abaixo diz.
polling = As atualizações ao vivo estão bloqueadas aqui; verificando a cada poucos segundos.
noscript = Esta página se atualiza sozinha a cada 20 segundos.
notify-button = Avise-me quando for minha vez
notify-on = Vamos enviar uma notificação quando for a sua vez.
notify-denied = As notificações estão bloqueadas neste navegador; mantenha a aba aberta.
notify-title = É a sua vez!
notify-body = Seu lugar em { $room } está pronto.
tab-title-admitted = ✅ Sua vez — { $room }
footer = Justo: por ordem de chegada. Com tecnologia Anteroom.
err-unknown-room = Essa sala de espera não existe
err-unknown-room-lead = Confira o link que você seguiu; esta sala de espera não existe.
err-rate-limited = Solicitações demais
err-rate-limited-lead =
    { $n ->
        [one] Esta página foi recarregada vezes demais. Você mantém seu lugar; ela tenta de novo sozinha em { $n } segundo.
       *[other] Esta página foi recarregada vezes demais. Você mantém seu lugar; ela tenta de novo sozinha em { $n } segundos.
    }
retrying-in = Tentando de novo em { $n } s…
err-not-found = Nada aqui
err-not-found-lead = Este endereço não é uma sala de espera. Se um site mandou você para cá, confira o link que ele deu.
err-unavailable = Já voltamos
err-unavailable-lead = A sala de espera está com problemas agora. Recarregue em alguns segundos; você mantém seu lugar.
err-restoring = A fila está sendo restaurada
err-restoring-lead = O armazenamento da sala de espera reiniciou, e os lugares que as pessoas já tinham estão sendo devolvidos primeiro. Novos lugares reabrem em instantes; esta página tenta de novo sozinha.
err-not-embeddable = Indisponível aqui
gw-need-pass = Esta página está atrás de uma sala de espera
gw-need-pass-lead = Entre na fila para continuar; você entrará quando for a sua vez.
gw-join-queue = Entrar na fila
gw-refused = O site não está respondendo
gw-refused-lead = O site por trás deste endereço recusou a conexão. Tente de novo em instantes.
gw-timeout = O site demorou demais para responder
gw-timeout-lead = O site por trás deste endereço não respondeu a tempo. Tente de novo em instantes.
gw-bad-request = Este endereço não pode ser lido
gw-bad-request-lead = O endereço tem uma forma que os sites leem de jeitos diferentes (uma '/' codificada, uma '\', uma parte '.' ou '..'). Use os links do próprio site.
err-not-embeddable-lead = Esta sala de espera não pode ser incorporada neste site.
pow-title = Verificando seu navegador
pow-lead = Isso leva alguns segundos e impede que robôs peguem os lugares. Você entra na fila assim que terminar (é preciso JavaScript).
pow-progress = Verificando seu navegador… { $n } %
pow-failed = Seu navegador não conseguiu concluir a verificação. Recarregue a página para tentar de novo.
err-places = Sua rede já tem os lugares dela nesta fila
err-places-lead = Alguém na mesma rede (um escritório, uma escola, uma rede móvel) já tem tantos lugares quanto esta fila permite por rede. Tente de novo quando um deles tiver entrado.
err-entry = Esta fila precisa de um convite do site
err-entry-lead = Abra a sala de espera pelo link do próprio site (faça login lá primeiro). O link que você seguiu não tem convite, ou ele expirou, ou é de outra fila.
try-again = Tentar de novo

drop-lead-scheduled = A fila abre às { $time }. Mantenha esta página aberta: ela entra na fila por você sozinha; não é preciso recarregar.
drop-lead-prequeue = Às { $time } todos aqui recebem um lugar aleatório; entrar antes não ajuda. Mantenha esta página aberta: ela passa para a fila sozinha.
drop-lead-queued-drop = Obrigado por esperar. Os lugares foram sorteados entre todos na pré-fila, e quem chegou depois entra atrás deles por ordem de chegada. Esta página se atualiza sozinha.
drop-footer-drop = Justo: um sorteio que qualquer um pode conferir e, depois, por ordem de chegada. Com tecnologia Anteroom.
drop-countdown-label = Abre em
drop-countdown-now = Abrindo agora…
drop-unit-hours = h
drop-unit-minutes = min
drop-unit-seconds = s
drop-fair-summary = Como meu lugar foi decidido?
drop-fair-explain = Quando a pré-fila abriu, esta venda publicou um compromisso: o SHA-256 de uma semente aleatória secreta. Na abertura ela revelou a semente, e todos na pré-fila foram ordenados por HMAC-SHA256(semente, o id de visitante). Esta página confere o seu próprio lugar aqui, no seu navegador.
drop-fair-checking = Conferindo…
drop-fair-result = Seu sorteio: { $draw }…; posição { $rank } de { $n }; o compromisso confere: { $ok }
drop-fair-yes = sim
drop-fair-no = não
drop-fair-not-in = Seu sorteio { $draw }… não está entre os da pré-fila: você entrou depois da abertura, então seu lugar segue a ordem de chegada.
drop-fair-mismatch = A semente revelada não confere com o compromisso publicado antes da abertura.
drop-fair-unavailable = Este navegador não consegue fazer a conferência (precisa de Web Crypto numa página segura). O registro está em { $url }.
drop-fair-failed = Não foi possível concluir a conferência: o registro de equidade não pôde ser lido. Tentando de novo em alguns segundos.

told-title-queued-random = Você está no sorteio
told-lead-queued-random = Cada vez que uma vaga se libera, uma pessoa é sorteada entre todos que estão esperando. Chegar antes ou recarregar não muda nada. Esta página se atualiza sozinha.
told-footer-random = Justo: um sorteio aleatório entre todos que estão esperando. Com tecnologia Anteroom.
told-chances-label = Suas chances
told-chances =
    { $n ->
        [one] A { $n } pessoa esperando agora entra em cerca de { $median }; 1 em 20 em até { $low }, 19 em 20 em até { $high }.
       *[other] Cerca de metade das { $n } pessoas esperando agora entra em até { $median }; 1 em 20 em até { $low }, 19 em 20 em até { $high }.
    }
told-chances-unknown = Ainda desconhecido: todos que esperam agora entram em no máximo { $t }.
told-chances-paused = Suspenso enquanto o sorteio está pausado.
told-note-random-draw = Nesta fila não há lugares: todos que esperam têm a mesma chance a cada sorteio, não importa quando chegaram. As chances são iguais para todos e mudam conforme as pessoas entram e saem.
told-note-any-time-before = Chegar a qualquer momento antes das { $open } dá no mesmo: a pré-fila abre às { $time }, e às { $open } todos nela são colocados em ordem aleatória. Não é preciso estar aqui no segundo exato da abertura.
told-fair-rank-explain = A posição é o seu sorteio entre todos da pré-fila na abertura; seu lugar conta só quem ainda espera na sua frente, então fica menor depois que alguns deles entraram.
told-not-live = Sem atualização ao vivo: nada desde { $t }. Tentando de novo…
told-dismiss = Entendi
told-err-unavailable-newcomer = A sala de espera está com problemas agora, então você ainda não conseguiu entrar na fila. Esta página tenta de novo sozinha.
told-err-unavailable-kept = A sala de espera está com problemas agora. Se você já tinha um lugar na fila, você o mantém. Esta página tenta de novo sozinha.
told-err-places-retry = Alguém na mesma rede (um escritório, uma escola, uma rede móvel) já tem tantos lugares quanto esta fila permite por rede. Uma vaga se libera quando um deles entra; esta página tenta de novo sozinha.
told-pow-noscript = Esta sala de espera verifica seu navegador com um cálculo rápido antes de você entrar na fila, e isso precisa de JavaScript. Ative o JavaScript para este site e recarregue esta página.
told-embed-refused-title = Esta sala de espera não pode ser exibida aqui
told-embed-refused = A sala de espera “{ $room }” não permite ser incorporada em { $origin }. Se este site é seu, adicione { $origin } aos embed_origins da sala.
