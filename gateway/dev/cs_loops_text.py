"""Phrase banks of the loop workload (`cs_loops`): per intent and language, the ways a
customer asks the question (`?` lines, alternatives split by ` | `), the ways an agent
gives the SAME answer (`=` lines: same facts, different words) and answers that MOVE the
question on when it comes back (`>` lines: a new reference, date, action, team or
resolution). `@name ref class` opens an intent: `ref` is what identifies it (order,
account, none), `class` its class hint. Slots: {ref} the order or account, {date} the
promised date, {amount}, {days}, {plan}; in moves {proto} a new reference, {date2} a new
date, {team} a named team. Plain data; `cs_loops_agent.parse_banks` reads it."""

from __future__ import annotations

INTENTS = """
@order_status order support
[pt]
? cadê meu pedido? | o pedido {ref} ainda não chegou, o que houve?
? quero saber onde está minha encomenda | alguma previsão de quando a compra chega?
? comprei faz dias e até agora nada, pode ver o {ref}? | quando vão entregar o que eu comprei?
= Seu pedido {ref} está em trânsito com a transportadora e a previsão de entrega é {date}.
= Consultei aqui: a encomenda já saiu do nosso centro e deve chegar até {date}.
= O {ref} segue a caminho, dentro do prazo, com entrega estimada para {date}.
= Pelo rastreamento, a compra está com a transportadora e o prazo final é {date}.
= A entrega continua prevista para {date}; o pacote já foi despachado e está em rota.
> Abri uma reclamação com a transportadora, protocolo {proto}; a nova previsão é {date2}.
> Localizei o pacote parado no centro de distribuição e pedi o reenvio hoje; chega até {date2}.
> Encaminhei o caso para a {team}, protocolo {proto}; eles te ligam até {date2}.
> Como passou do prazo, autorizei o envio de um novo produto, com entrega até {date2}.
[en]
? where is my order? | order {ref} still hasn't shown up, what's going on?
? can you tell me when my package will arrive? | I bought this days ago and nothing yet
? any update on {ref}? | when are you actually delivering my stuff?
= Your order {ref} is in transit with the carrier and the estimated delivery date is {date}.
= I've checked: the parcel has left our warehouse and should reach you by {date}.
= {ref} is on its way and still within the delivery window, expected {date}.
= According to tracking, the carrier has your package and the latest delivery date is {date}.
= Delivery is still scheduled for {date}; the package was shipped and is moving.
> I've opened a claim with the carrier, reference {proto}; the new delivery date is {date2}.
> I found the parcel held at the depot and requested a redelivery today; it arrives by {date2}.
> I've escalated this to the {team}, case {proto}; they'll call you by {date2}.
> Since it's past the deadline, I've approved a replacement shipment, arriving by {date2}.
[es]
? ¿dónde está mi pedido? | el pedido {ref} todavía no ha llegado, ¿qué pasa?
? quiero saber cuándo me llega la compra | hace días que compré y no recibo nada
? ¿me pueden decir algo del {ref}? | ¿para cuándo la entrega de lo que pedí?
= Su pedido {ref} está en tránsito con la empresa de transporte y llegará como tarde el {date}.
= Lo he comprobado: el paquete ya salió de nuestro almacén y debería recibirlo antes del {date}.
= El {ref} sigue en camino, dentro del plazo, con entrega estimada el {date}.
= Según el seguimiento, el envío lo tiene el transportista y la fecha prevista es el {date}.
> He abierto una reclamación con el transportista, referencia {proto}; la nueva fecha es el {date2}.
> El paquete estaba retenido en el almacén y he pedido el reenvío hoy; llegará el {date2}.
> He pasado el caso al {team}, expediente {proto}; le llamarán antes del {date2}.
> Como está fuera de plazo, he autorizado un envío nuevo, que llegará el {date2}.
@refund_status order dispute
[pt]
? e o meu reembolso? | o estorno do {ref} já foi feito?
? quando o dinheiro volta pra minha conta? | devolvi o produto e não recebi o valor ainda
? cadê a devolução do meu dinheiro? | vocês já pagaram o reembolso do {ref}?
= O reembolso de {amount} foi solicitado e está em processamento; cai em até {days} dias úteis.
= O estorno já está em andamento e o valor de {amount} volta para você em até {days} dias úteis.
= Seu dinheiro está em processo de devolução: o prazo é de até {days} dias úteis para {amount}.
= A devolução de {amount} foi registrada e segue o prazo padrão de {days} dias úteis.
> O reembolso foi aprovado agora: {amount} liberados, comprovante {proto}, cai até {date2}.
> Vi que o estorno travou por um erro de dados; corrigi e reenviei, protocolo {proto}.
> Escalei para a {team}, que vai priorizar o seu reembolso; protocolo {proto}.
> Em vez de esperar o cartão, posso gerar um crédito de {amount} na sua conta agora mesmo.
[en]
? where's my refund? | has the refund for {ref} gone through yet?
? when do I get my money back? | I sent the item back and still haven't been paid
? has the money been returned to my card? | did you actually refund {ref} or not?
= The refund of {amount} has been requested and is processing; allow up to {days} business days.
= Your refund is underway and the {amount} will be back with you within {days} business days.
= The money is being returned: {amount}, with a processing window of up to {days} business days.
= We've logged the {amount} refund and it follows the standard {days}-business-day timeline.
> The refund was just approved: {amount} released, receipt {proto}, it lands by {date2}.
> The refund was stuck on a data error; I've fixed it and resubmitted it, reference {proto}.
> I've escalated this to the {team} to prioritise your refund; case number {proto}.
> Rather than waiting for the card, I can issue {amount} as store credit right now.
[es]
? ¿y mi reembolso? | ¿ya me devolvieron el dinero del {ref}?
? ¿cuándo me vuelve el dinero a la cuenta? | devolví el producto y sigo sin el importe
? ¿han hecho ya la devolución? | quiero saber qué pasa con el reembolso del {ref}
= El reembolso de {amount} está solicitado y en trámite; lo recibirá en un máximo de {days} días hábiles.
= La devolución ya está en curso y los {amount} volverán a su cuenta en {days} días hábiles como mucho.
= Su dinero se está devolviendo: son {amount} y el plazo es de hasta {days} días hábiles.
= Tenemos registrada la devolución de {amount}, que sigue el plazo habitual de {days} días hábiles.
> El reembolso se acaba de aprobar: {amount} liberados, justificante {proto}, llega el {date2}.
> La devolución estaba bloqueada por un error de datos; lo corregí y la reenvié, ref. {proto}.
> He escalado el caso al {team} para que prioricen su reembolso; expediente {proto}.
> En lugar de esperar a la tarjeta, puedo abonarle {amount} como saldo ahora mismo.
@double_charge order dispute
[pt]
? fui cobrado duas vezes pelo {ref} | por que apareceram duas cobranças no meu cartão?
? tem uma cobrança a mais de {amount} na fatura | vocês debitaram em dobro
? quero entender esse valor repetido no cartão | cobraram minha compra duas vezes, e agora?
= A segunda cobrança é só uma pré-autorização do cartão e some sozinha em até {days} dias úteis.
= Esse valor duplicado é uma reserva temporária do banco, não é cobrança; ela cai em {days} dias úteis.
= Só uma das cobranças de {amount} é real; a outra é pré-autorização e é liberada em {days} dias úteis.
= O débito repetido é um bloqueio provisório e será desfeito automaticamente em até {days} dias úteis.
> Confirmei com o financeiro que a segunda cobrança foi real; o estorno de {amount} é o {proto}.
> Pedi ao banco o cancelamento da pré-autorização agora, protocolo {proto}; libera até {date2}.
> Encaminhei para a {team} contestar a cobrança, protocolo {proto}, resposta até {date2}.
[en]
? I was charged twice for {ref} | why are there two charges on my card?
? there's an extra {amount} charge on my statement | you billed me double
? what is this duplicate payment on my card? | my purchase got charged twice, now what?
= The second charge is only a card pre-authorization and drops off by itself within {days} business days.
= That duplicate amount is a temporary hold by your bank, not a charge; it clears in {days} business days.
= Only one {amount} charge is real; the other is a pre-authorization released within {days} business days.
= The repeated debit is a provisional hold and it will be reversed automatically within {days} business days.
> Finance confirmed the second charge was real; the {amount} reversal is reference {proto}.
> I've asked the bank to void the pre-authorization now, reference {proto}; it clears by {date2}.
> I've sent this to the {team} to dispute the charge, case {proto}, answer by {date2}.
[es]
? me cobraron dos veces el {ref} | ¿por qué hay dos cargos en mi tarjeta?
? tengo un cargo de más de {amount} en el extracto | me han cobrado el doble
? ¿qué es este pago repetido en la tarjeta? | cobraron mi compra dos veces, ¿y ahora qué?
= El segundo cargo es solo una preautorización de la tarjeta y desaparece sola en {days} días hábiles.
= Ese importe duplicado es una retención temporal del banco, no un cobro; se libera en {days} días hábiles.
= Solo uno de los cargos de {amount} es real; el otro es una preautorización que se anula en {days} días.
= El cargo repetido es un bloqueo provisional y se revertirá automáticamente en {days} días hábiles.
> Finanzas confirma que el segundo cargo fue real; la anulación de {amount} es la ref. {proto}.
> He pedido al banco que anule la preautorización ya, referencia {proto}; se libera el {date2}.
> Lo he enviado al {team} para impugnar el cargo, expediente {proto}, respuesta el {date2}.
@login account technical
[pt]
? não consigo entrar na minha conta | o email de redefinir senha não chega no {ref}
? esqueci a senha e não tô conseguindo trocar | o app diz senha inválida, como eu acesso?
? fico travado na tela de login | como recupero o acesso à conta {ref}?
= Enviei o link de redefinição para {ref}; confira também o spam, ele vale por 30 minutos.
= O link para criar uma senha nova foi para {ref}. Se não aparecer, veja a pasta de lixo eletrônico.
= Para entrar, use o link de troca de senha que mandamos para {ref}; ele expira em 30 minutos.
= Já disparamos a redefinição para o seu email {ref}; abra o link em até meia hora, pode estar no spam.
> Desbloqueei sua conta, que estava travada por tentativas erradas; tente entrar agora.
> Troquei o email de acesso para o que você informou e mandei um código de 6 dígitos por SMS.
> Abri um chamado com a {team} para o seu acesso, protocolo {proto}, retorno até {date2}.
[en]
? I can't log in to my account | the password reset email never reaches {ref}
? forgot my password and can't change it | the app says invalid password, how do I get in?
? I'm stuck on the sign-in screen | how do I get back into the account {ref}?
= I've sent the reset link to {ref}; please check spam too, it's valid for 30 minutes.
= The link to set a new password went to {ref}. If you don't see it, look in your junk folder.
= To get in, use the password reset link we emailed to {ref}; it expires after 30 minutes.
= A reset has been sent to your address {ref}; open the link within half an hour, it may be in spam.
> I've unlocked your account, it was blocked after failed attempts; please try logging in now.
> I've switched the login email to the one you gave me and texted you a 6-digit code.
> I've opened a ticket with the {team} about your access, reference {proto}, reply by {date2}.
[es]
? no puedo entrar en mi cuenta | no me llega el correo para cambiar la contraseña a {ref}
? olvidé la clave y no consigo cambiarla | la app dice contraseña incorrecta, ¿cómo entro?
? me quedo atascado en la pantalla de acceso | ¿cómo recupero el acceso a la cuenta {ref}?
= Le he enviado el enlace de restablecimiento a {ref}; revise también el spam, vale 30 minutos.
= El enlace para crear una contraseña nueva se envió a {ref}. Si no lo ve, mire en correo no deseado.
= Para entrar, use el enlace de cambio de contraseña que mandamos a {ref}; caduca en 30 minutos.
= Ya se envió el restablecimiento a su correo {ref}; abra el enlace antes de media hora, puede estar en spam.
> He desbloqueado su cuenta, estaba bloqueada por intentos fallidos; pruebe a entrar ahora.
> He cambiado el correo de acceso por el que me indicó y le envié un código de 6 dígitos por SMS.
> He abierto una incidencia con el {team} sobre su acceso, referencia {proto}, respuesta el {date2}.
@app_error none technical
[pt]
? o aplicativo fecha sozinho quando vou pagar | dá erro na hora de finalizar a compra
? o app trava e não sai da tela de pagamento | aparece uma mensagem de erro e volta pro início
? por que o app não funciona no meu celular? | tento abrir o carrinho e o app cai
= Atualize o app para a versão mais recente, limpe o cache e abra de novo que o pagamento funciona.
= Esse erro some com a última versão do aplicativo: atualize na loja e apague os dados temporários.
= O problema é da versão antiga; instale a atualização e limpe o cache nas configurações do celular.
= Recomendo atualizar o aplicativo e limpar o cache; com isso a tela de pagamento volta ao normal.
> Esse erro é conhecido na versão atual; a correção sai em {date2}. Até lá, pague pelo site.
> Registrei o erro com os dados do seu aparelho no chamado {proto} para a {team}.
> Gerei um link de pagamento para você concluir a compra pelo navegador agora.
[en]
? the app closes every time I try to pay | I get an error when checking out
? the app freezes on the payment screen | an error pops up and it kicks me back to home
? why won't the app work on my phone? | I open the cart and the app crashes
= Please update the app to the latest version, clear the cache and reopen it; payment will work.
= That error goes away with the newest app version: update it from the store and clear temporary data.
= It's an issue with the old version; install the update and clear the cache in your phone settings.
= I'd recommend updating the app and clearing its cache; that fixes the payment screen.
> That's a known bug in the current version; the fix ships on {date2}. Until then, pay on the web.
> I've logged the crash with your device details in ticket {proto} for the {team}.
> I've generated a payment link so you can finish the purchase in your browser right now.
[es]
? la aplicación se cierra cuando voy a pagar | me da error al finalizar la compra
? la app se queda colgada en la pantalla de pago | sale un mensaje de error y vuelve al inicio
? ¿por qué no funciona la app en mi móvil? | abro el carrito y se cae la aplicación
= Actualice la app a la última versión, borre la caché y vuelva a abrirla; el pago funcionará.
= Ese error desaparece con la versión más reciente: actualícela en la tienda y borre los datos temporales.
= Es un fallo de la versión antigua; instale la actualización y limpie la caché en los ajustes del móvil.
= Le recomiendo actualizar la aplicación y vaciar la caché; así la pantalla de pago vuelve a funcionar.
> Es un fallo conocido de la versión actual; la corrección sale el {date2}. Mientras, pague en la web.
> He registrado el error con los datos de su móvil en la incidencia {proto} para el {team}.
> Le he generado un enlace de pago para que termine la compra desde el navegador ahora.
@address_change order support
[pt]
? preciso mudar o endereço de entrega | dá pra entregar o {ref} em outro endereço?
? me mudei, como troco o endereço do pedido? | coloquei o endereço errado, consegue corrigir?
? quero que entreguem na casa da minha mãe | posso alterar o local de entrega do {ref}?
= Como o {ref} já foi despachado, não dá mais para alterar o endereço de entrega.
= O pedido já saiu para a transportadora, então o endereço não pode mais ser modificado.
= Infelizmente, depois do despacho o sistema não permite trocar o local de entrega.
= A alteração de endereço só é possível antes do envio, e o seu pedido já foi enviado.
> Consegui interceptar com a transportadora: a entrega vai para o novo endereço, protocolo {proto}.
> Agendei a retirada numa agência perto do endereço novo; o código de retirada é {proto}.
> Vou cancelar este envio e mandar um novo para o endereço certo, chegando até {date2}.
[en]
? I need to change my delivery address | can {ref} be delivered somewhere else?
? I moved, how do I update the address on my order? | I typed the wrong address, can you fix it?
? I want it delivered to my mom's place | can I change where {ref} is going?
= Since {ref} has already shipped, the delivery address can't be changed anymore.
= The order is already with the carrier, so the address can no longer be modified.
= Unfortunately, once an order is dispatched our system doesn't allow changing the destination.
= Address changes are only possible before shipping, and your order has already been sent.
> I managed to intercept it with the carrier: it'll go to the new address, reference {proto}.
> I've set up pickup at a depot near your new address; the collection code is {proto}.
> I'll cancel this shipment and send a new one to the right address, arriving by {date2}.
[es]
? necesito cambiar la dirección de entrega | ¿pueden entregar el {ref} en otra dirección?
? me mudé, ¿cómo cambio la dirección del pedido? | puse mal la dirección, ¿la pueden corregir?
? quiero que lo entreguen en casa de mi madre | ¿puedo modificar el destino del {ref}?
= Como el {ref} ya fue enviado, ya no es posible cambiar la dirección de entrega.
= El pedido ya está con el transportista, así que la dirección no se puede modificar.
= Lamentablemente, una vez despachado, el sistema no permite cambiar el destino.
= El cambio de dirección solo se puede hacer antes del envío, y su pedido ya salió.
> He podido interceptarlo con el transportista: irá a la nueva dirección, referencia {proto}.
> He programado la recogida en una oficina cerca de su nueva dirección; el código es {proto}.
> Voy a anular este envío y mandar otro a la dirección correcta, que llegará el {date2}.
@cancellation order support
[pt]
? quero cancelar o pedido {ref} | como faço pra desistir da compra?
? já pedi o cancelamento, foi feito? | não quero mais o produto, cancela pra mim
? o cancelamento do {ref} foi confirmado? | preciso anular essa compra urgente
= O cancelamento do {ref} está registrado e em análise; a confirmação chega por email em até {days} dias.
= Sua solicitação de cancelamento foi aberta e você recebe a confirmação por email em {days} dias.
= A desistência da compra já consta no sistema, em análise, com resposta por email em até {days} dias.
= O pedido está em processo de cancelamento; a confirmação final vai para o seu email em {days} dias.
> Acabei de confirmar o cancelamento; o comprovante é {proto} e o estorno sai até {date2}.
> O pedido já tinha saído, então registrei a recusa na entrega, protocolo {proto}.
> Passei para a {team} concluir hoje mesmo; o número do atendimento é {proto}.
[en]
? I want to cancel order {ref} | how do I back out of this purchase?
? I already asked to cancel, is it done? | I don't want it anymore, please cancel it
? has the cancellation of {ref} been confirmed? | I need this purchase cancelled asap
= The cancellation of {ref} is logged and under review; confirmation comes by email within {days} days.
= Your cancellation request is open and you'll get the confirmation email within {days} days.
= The cancellation is in our system, under review, and you'll hear back by email within {days} days.
= Your order is being cancelled; the final confirmation will be emailed to you within {days} days.
> I've just confirmed the cancellation; the receipt is {proto} and the refund goes out by {date2}.
> The order had already shipped, so I've registered a refusal at delivery, reference {proto}.
> I've handed it to the {team} to finish today; your case number is {proto}.
[es]
? quiero cancelar el pedido {ref} | ¿cómo anulo la compra?
? ya pedí la cancelación, ¿está hecha? | ya no quiero el producto, cancélenlo por favor
? ¿está confirmada la cancelación del {ref}? | necesito anular esta compra cuanto antes
= La cancelación del {ref} está registrada y en revisión; la confirmación llega por correo en {days} días.
= Su solicitud de cancelación está abierta y recibirá la confirmación por correo en {days} días.
= La anulación ya consta en el sistema, en revisión, y le responderemos por correo en {days} días.
= El pedido está en proceso de cancelación; la confirmación final se la enviamos por correo en {days} días.
> Acabo de confirmar la cancelación; el justificante es {proto} y el reembolso sale el {date2}.
> El pedido ya había salido, así que he registrado el rechazo en la entrega, referencia {proto}.
> Lo he pasado al {team} para cerrarlo hoy mismo; su número de caso es {proto}.
@plan_price account catalog
[pt]
? por que minha mensalidade aumentou? | a fatura da conta {ref} veio mais cara
? quanto está custando o {plan} agora? | mudaram o preço do meu plano sem avisar?
? esse valor novo da assinatura tá certo? | de onde saiu esse aumento na cobrança?
= O {plan} teve o reajuste anual e passou a custar {amount} por mês a partir de {date}.
= Houve a correção anual de preços: seu plano agora é {amount} mensais, valendo desde {date}.
= O aumento é o reajuste do ano; o valor do {plan} ficou em {amount}, com vigência em {date}.
= A mensalidade nova, {amount}, vem da atualização anual da tabela, aplicada em {date}.
> Apliquei um desconto de fidelidade: a mensalidade volta para {amount} a partir de {date2}.
> Posso migrar você para o plano anual, que sai mais barato; a troca ficou registrada em {proto}.
> Abri uma contestação com a {team} sobre o reajuste, protocolo {proto}, resposta até {date2}.
[en]
? why did my monthly fee go up? | the bill on account {ref} is higher than usual
? how much does the {plan} cost now? | did you change my plan's price without telling me?
? is this new subscription amount right? | where does this increase on my bill come from?
= The {plan} had its yearly price adjustment and now costs {amount} a month starting {date}.
= There was an annual price update: your plan is now {amount} monthly, effective {date}.
= The increase is this year's adjustment; the {plan} is now {amount}, in effect from {date}.
= The new fee, {amount}, comes from the annual update to our price list, applied on {date}.
> I've applied a loyalty discount: your monthly fee goes back to {amount} from {date2}.
> I can move you to the yearly plan, which is cheaper; the switch is logged under {proto}.
> I've opened a dispute with the {team} about the increase, case {proto}, answer by {date2}.
[es]
? ¿por qué me subió la cuota mensual? | la factura de la cuenta {ref} vino más cara
? ¿cuánto cuesta ahora el {plan}? | ¿cambiaron el precio de mi plan sin avisar?
? ¿está bien este nuevo importe de la suscripción? | ¿de dónde sale esta subida en el cobro?
= El {plan} tuvo la actualización anual y ahora cuesta {amount} al mes desde el {date}.
= Hubo una revisión anual de tarifas: su plan pasa a {amount} mensuales, vigente desde el {date}.
= La subida es el ajuste de este año; el {plan} queda en {amount}, aplicado el {date}.
= La nueva cuota, {amount}, viene de la actualización anual de precios, en vigor desde el {date}.
> He aplicado un descuento de fidelidad: la cuota vuelve a {amount} a partir del {date2}.
> Puedo pasarle al plan anual, que sale más barato; el cambio queda registrado con {proto}.
> He abierto una reclamación con el {team} por la subida, expediente {proto}, respuesta el {date2}.
@notify_config none technical
[pt]
? como configuro o aviso automático pros clientes? | o aviso automático não está disparando
? onde eu ligo as notificações por WhatsApp? | quero que o sistema mande mensagem sozinho, como faz?
? as mensagens automáticas não saem, o que falta? | como ativo o envio automático de avisos?
= Vá em Configurações > Notificações, ative Aviso automático e escolha o canal de envio.
= No painel, abra Configurações, depois Notificações, ligue a opção de aviso automático e salve o canal.
= É só entrar em Notificações dentro de Configurações, ativar o aviso automático e selecionar o canal.
= A opção fica em Configurações, aba Notificações: marque Aviso automático e defina por onde enviar.
> Olhei sua conta: faltava validar o número do WhatsApp. Mandei o código agora para validar.
> Ativei o aviso automático pra você daqui mesmo; o primeiro disparo de teste saiu agora.
> Seu plano não inclui avisos por WhatsApp; liberei um teste grátis até {date2}.
[en]
? how do I set up automatic notices for customers? | the automatic notice isn't going out
? where do I turn on WhatsApp notifications? | I want the system to message people on its own
? the automated messages aren't sending, what's missing? | how do I enable automatic alerts?
= Go to Settings > Notifications, switch on Automatic notice and pick the sending channel.
= In the dashboard, open Settings, then Notifications, turn on automatic notices and save a channel.
= Just open Notifications under Settings, enable the automatic notice and select the channel.
= The option lives in Settings, Notifications tab: tick Automatic notice and choose how it's sent.
> I checked your account: the WhatsApp number wasn't verified. I've just sent you the code.
> I've switched the automatic notice on for you from here; a test message just went out.
> Your plan doesn't include WhatsApp notices; I've enabled a free trial until {date2}.
[es]
? ¿cómo configuro el aviso automático a los clientes? | el aviso automático no se envía
? ¿dónde activo las notificaciones por WhatsApp? | quiero que el sistema mande mensajes solo
? los mensajes automáticos no salen, ¿qué falta? | ¿cómo activo el envío automático de avisos?
= Entre en Ajustes > Notificaciones, active Aviso automático y elija el canal de envío.
= En el panel, abra Ajustes, luego Notificaciones, encienda los avisos automáticos y guarde el canal.
= Basta con ir a Notificaciones dentro de Ajustes, activar el aviso automático y seleccionar el canal.
= La opción está en Ajustes, pestaña Notificaciones: marque Aviso automático y defina por dónde se envía.
> He mirado su cuenta: faltaba validar el número de WhatsApp. Le acabo de enviar el código.
> Le he activado el aviso automático desde aquí; el primer envío de prueba ya salió.
> Su plan no incluye avisos por WhatsApp; le he activado una prueba gratuita hasta el {date2}.
@return_exchange order support
[pt]
? como faço pra trocar o produto? | quero devolver o {ref}, qual o procedimento?
? o tamanho não serviu, posso trocar? | onde peço a devolução da compra?
? qual o passo a passo pra devolver? | o {ref} veio diferente, quero trocar
= Peça a troca em Meus pedidos > Devolver, em até 7 dias; o código de postagem chega por email.
= No app, entre em Meus pedidos e toque em Devolver; você tem 7 dias e recebe o código dos Correios.
= A devolução é solicitada pelo próprio app, em Meus pedidos, dentro de 7 dias, e o código vai por email.
= Basta abrir o pedido no app, escolher Devolver dentro do prazo de 7 dias e usar o código que enviaremos.
> Já gerei a troca por aqui: o código de postagem é {proto}, válido até {date2}.
> Agendei a coleta na sua casa para {date2}, sem custo; o protocolo é {proto}.
> Como o item veio diferente, vou mandar o correto antes de você devolver; chega até {date2}.
[en]
? how do I exchange the product? | I want to return {ref}, what's the process?
? the size doesn't fit, can I swap it? | where do I request a return?
? what are the steps to send it back? | {ref} isn't what I expected, I want to exchange it
= Request it under My orders > Return within 7 days; the shipping label arrives by email.
= In the app, go to My orders and tap Return; you have 7 days and we email you the prepaid label.
= Returns are requested in the app, under My orders, within 7 days, and the label is sent by email.
= Just open the order in the app, choose Return within the 7-day window and use the label we send.
> I've created the exchange from here: the shipping code is {proto}, valid until {date2}.
> I've booked a free pickup at your home on {date2}; the reference is {proto}.
> Since it's not what you ordered, I'll ship the right one before you return it; by {date2}.
[es]
? ¿cómo cambio el producto? | quiero devolver el {ref}, ¿qué tengo que hacer?
? la talla no me vale, ¿puedo cambiarla? | ¿dónde solicito la devolución?
? ¿cuáles son los pasos para devolverlo? | el {ref} no es como esperaba, quiero cambiarlo
= Solicítelo en Mis pedidos > Devolver en un plazo de 7 días; la etiqueta de envío llega por correo.
= En la app, entre en Mis pedidos y pulse Devolver; tiene 7 días y le enviamos la etiqueta por correo.
= La devolución se pide en la propia app, en Mis pedidos, dentro de 7 días, y la etiqueta va por correo.
= Abra el pedido en la app, elija Devolver dentro del plazo de 7 días y use la etiqueta que le mandamos.
> Ya he generado el cambio desde aquí: el código de envío es {proto}, válido hasta el {date2}.
> He programado la recogida gratuita en su casa el {date2}; la referencia es {proto}.
> Como no es lo que pidió, le envío el correcto antes de que lo devuelva; llega el {date2}.
@coupon order catalog
[pt]
? meu cupom não deu desconto | por que o cupom não foi aplicado no {ref}?
? usei o código promocional e cobrou o preço cheio | cadê o desconto que prometeram?
? o cupom diz inválido, o que faço? | dá pra aplicar o desconto depois da compra?
= O cupom vale só para itens sem promoção e compras acima de {amount}, e não pode ser aplicado depois.
= Esse código não acumula com produtos já em oferta e exige mínimo de {amount}; não dá pra aplicar agora.
= A regra do cupom é compra mínima de {amount} sem itens em promoção, e ele não é usado retroativamente.
= O desconto não entrou porque o pedido tinha item em oferta ou não chegou a {amount}; depois não aplica.
> Abri uma exceção: vou estornar {amount} referente ao desconto, protocolo {proto}.
> Gerei um cupom novo, {proto}, válido até {date2}, para usar na próxima compra.
> Encaminhei para a {team} avaliar o desconto; protocolo {proto}, retorno até {date2}.
[en]
? my coupon didn't give me a discount | why wasn't the coupon applied to {ref}?
? I used the promo code and was charged full price | where's the discount you promised?
? the coupon says invalid, what do I do? | can you apply the discount after the purchase?
= The coupon only works on full-price items and orders over {amount}, and can't be applied afterwards.
= That code doesn't stack with sale items and needs a {amount} minimum; it can't be added now.
= The coupon rule is a {amount} minimum with no discounted items, and it isn't applied retroactively.
= The discount didn't apply because the order had a sale item or was under {amount}; it can't be added later.
> I've made an exception and will refund {amount} for the discount, reference {proto}.
> I've created a new coupon, {proto}, valid until {date2}, for your next order.
> I've passed it to the {team} to review the discount; case {proto}, answer by {date2}.
[es]
? mi cupón no me hizo descuento | ¿por qué no se aplicó el cupón al {ref}?
? usé el código promocional y me cobraron el precio completo | ¿dónde está el descuento prometido?
? el cupón dice no válido, ¿qué hago? | ¿pueden aplicar el descuento después de la compra?
= El cupón solo vale para artículos sin rebaja y compras de más de {amount}, y no se aplica después.
= Ese código no se acumula con productos en oferta y pide un mínimo de {amount}; ya no se puede aplicar.
= La condición del cupón es un mínimo de {amount} sin artículos rebajados, y no se aplica con efecto retroactivo.
= El descuento no entró porque el pedido tenía un artículo en oferta o no llegaba a {amount}; después no se aplica.
> He hecho una excepción y le devolveré {amount} por el descuento, referencia {proto}.
> Le he generado un cupón nuevo, {proto}, válido hasta el {date2}, para su próxima compra.
> Lo he enviado al {team} para que revise el descuento; expediente {proto}, respuesta el {date2}.
"""  # noqa: E501
